// The tensors inside a value, wherever they sit: a model's output may be a tensor, a tuple of them
// or a list. One walk for every place that copies or moves an output as a whole.
#pragma once
#include <vector>

#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>

namespace tcprof {

// `v` with every tensor in it, inside tuples and lists too, replaced by fn(tensor); other values
// as they are. An undefined tensor is handed to fn like any other.
template <typename Fn>
c10::IValue map_tensors(const c10::IValue& v, const Fn& fn) {
  if (v.isTensor()) return fn(v.toTensor());
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& item : v.toTupleRef().elements()) items.push_back(map_tensors(item, fn));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor& t : v.toTensorVector()) list.push_back(fn(t));
    return list;
  }
  if (v.isList()) {
    c10::impl::GenericList list(v.toList().elementType());
    for (const c10::IValue& item : v.toListRef()) list.push_back(map_tensors(item, fn));
    return list;
  }
  return v;
}

}  // namespace tcprof
