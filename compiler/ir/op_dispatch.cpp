#include "compiler/ir/op_dispatch.h"

#include <fmt/format.h>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/error.h"

namespace tcprof {

c10::IValue sym_value(const SymExpr& e, int64_t value) {
  return is_boolean(e) ? c10::IValue(value != 0) : c10::IValue(value);
}

c10::IValue evaluate_arg(const Arg& arg, const std::vector<c10::IValue>& slots, const SymBindings& bindings) {
  switch (arg.kind) {
    case Arg::Kind::Slot: return slots[static_cast<size_t>(arg.slot)];
    case Arg::Kind::Constant: return arg.constant;
    case Arg::Kind::Sym: return sym_value(*arg.sym, arg.program.run(bindings));
    case Arg::Kind::List: {
      if (!arg.element_type) {  // a tuple
        std::vector<c10::IValue> items;
        for (const auto& item : arg.items) items.push_back(evaluate_arg(item, slots, bindings));
        return c10::ivalue::Tuple::create(std::move(items));
      }
      c10::impl::GenericList list(arg.element_type);
      list.reserve(arg.items.size());
      for (const auto& item : arg.items) list.push_back(evaluate_arg(item, slots, bindings));
      return list;
    }
  }
  return c10::IValue();
}

bool is_vararg(const torch::jit::Node* node) {
  const auto* op = node->maybeOperator();
  return op && op->schema().is_vararg();
}

bool has_operation(const torch::jit::Node* node) {
  auto kind = node->kind();
  return kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack || kind == c10::prim::TupleConstruct ||
         kind == c10::prim::ListConstruct || kind == c10::prim::DictConstruct || node->maybeOperator() != nullptr;
}

torch::jit::Operation node_operation(const torch::jit::Node* node) {
  // LibTorch's interpreter runs these itself (they are instructions, not operators).
  size_t outputs = node->outputs().size();
  size_t inputs = node->inputs().size();
  auto kind = node->kind();
  if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
    return [outputs](torch::jit::Stack& stack) {
      c10::IValue v = torch::jit::pop(stack);
      auto items = v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
      if (items.size() != outputs) {
        throw Error(ErrorKind::Input, fmt::format("expected {} values to unpack, got {}", outputs, items.size()));
      }
      for (auto& item : items) stack.push_back(std::move(item));
    };
  }
  if (kind == c10::prim::TupleConstruct) {
    return [inputs](torch::jit::Stack& stack) {
      std::vector<c10::IValue> items(stack.end() - static_cast<long>(inputs), stack.end());
      torch::jit::drop(stack, inputs);
      stack.emplace_back(c10::ivalue::Tuple::create(std::move(items)));
    };
  }
  if (kind == c10::prim::ListConstruct) {
    auto type = node->output()->type()->expect<c10::ListType>();
    return [inputs, type](torch::jit::Stack& stack) {
      c10::impl::GenericList list(type->getElementType());
      for (auto it = stack.end() - static_cast<long>(inputs); it != stack.end(); ++it) list.push_back(*it);
      torch::jit::drop(stack, inputs);
      stack.emplace_back(std::move(list));
    };
  }
  if (kind == c10::prim::DictConstruct) {
    auto type = node->output()->type()->expect<c10::DictType>();
    return [inputs, type](torch::jit::Stack& stack) {
      c10::impl::GenericDict dict(type->getKeyType(), type->getValueType());
      for (auto it = stack.end() - static_cast<long>(inputs); it != stack.end(); it += 2) dict.insert_or_assign(*it, *(it + 1));
      torch::jit::drop(stack, inputs);
      stack.emplace_back(std::move(dict));
    };
  }
  torch::jit::Operation op = node->getOperation();
  if (is_vararg(node)) {
    return [op, inputs](torch::jit::Stack& stack) mutable {
      stack.emplace_back(static_cast<int64_t>(inputs));
      op(stack);
    };
  }
  return op;
}

void run_node(const torch::jit::Node* node, torch::jit::Stack& stack) { node_operation(node)(stack); }

torch::jit::Operation op_operation(const GraphOp& op) {
  torch::jit::Operation run = node_operation(op.node);
  if (op.name == op.node->kind().toQualString()) return run;
  // Functionalized (`mul_` named `mul`): the in-place operator on a copy of its target. It keeps
  // the in-place form's dtype and shape, and never writes the original, which may be a constant
  // folded at compile time and shared by every call.
  size_t inputs = op.node->inputs().size();
  return [run, inputs](torch::jit::Stack& stack) mutable {
    c10::IValue& target = stack[stack.size() - inputs];
    if (target.isTensor()) target = target.toTensor().clone();
    run(stack);
  };
}

void run_op(const GraphOp& op, torch::jit::Stack& stack) { op_operation(op)(stack); }

}  // namespace tcprof
