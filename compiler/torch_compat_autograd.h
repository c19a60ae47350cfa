// Autograd nodes across LibTorch versions (the rest of the differences: compiler/torch_compat.h).
// LibTorch 2.15 holds a torch::autograd::Node by c10::intrusive_ptr (Node derives from
// intrusive_ptr_target, getptr()); before, by std::shared_ptr (enable_shared_from_this). Decided by
// the type itself, not by a version number.
#pragma once
#include <memory>
#include <type_traits>
#include <utility>

#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/autograd/function.h>

namespace tcprof::compat {

constexpr bool kIntrusiveAutogradNodes = std::is_base_of_v<c10::intrusive_ptr_target, torch::autograd::Node>;

// A new node of type NodeT, held the way this LibTorch holds nodes.
template <class NodeT, class... Args>
auto make_autograd_node(Args&&... args) {
  if constexpr (kIntrusiveAutogradNodes) {
    return c10::make_intrusive<NodeT>(std::forward<Args>(args)...);
  } else {
    return std::make_shared<NodeT>(std::forward<Args>(args)...);
  }
}

// The owning pointer to `node` from inside it (for set_history).
template <class NodeT>
auto owning_pointer(NodeT* node) {
  if constexpr (kIntrusiveAutogradNodes) {
    return node->getptr();
  } else {
    return node->shared_from_this();
  }
}

}  // namespace tcprof::compat
