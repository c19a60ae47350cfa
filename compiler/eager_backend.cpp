// The eager backend: runs a captured graph op by op with LibTorch's own kernels. It is the
// reference the compiled backends are checked against, and the fallback when they cannot compile.
#include <fmt/format.h>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "compiler/backend.h"
#include "compiler/guards.h"
#include "profiler/cpu_profiler.h"
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

namespace {

class EagerGraph : public CompiledGraph {
 public:
  EagerGraph(const CapturedGraph& graph, CpuProfiler* profiler) : graph_(graph), profiler_(profiler) {
    for (const auto& op : graph_.ops) {
      operations_.push_back(node_operation(op.node));
      // Every op runs as LibTorch's own kernel: an "eager" kernel in the profile.
      if (profiler_) keys_.push_back(profiler_->key(op.name, "eager"));
    }
  }

  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id) override {
    std::vector<c10::IValue> slots(static_cast<size_t>(graph_.num_slots));
    std::copy(inputs.begin(), inputs.end(), slots.begin());
    InputBindings bindings(inputs);
    torch::jit::Stack stack;
    for (size_t i = 0; i < graph_.ops.size(); ++i) {
      const GraphOp& op = graph_.ops[i];
      stack.clear();
      for (const Arg& arg : op.args) stack.push_back(evaluate_arg(arg, slots, bindings));
      try {
        if (profiler_ && profiler_->enabled()) {
          auto timed = profiler_->time(keys_[i], graph_id);
          operations_[i](stack);
        } else {
          operations_[i](stack);
        }
      } catch (const c10::Error& e) {
        throw Error(ErrorKind::Input, fmt::format("{} at {}:{} failed: {}", op.name, op.loc.file,
                                                  op.loc.line, e.what_without_backtrace()));
      }
      for (size_t o = 0; o < op.outputs.size(); ++o) slots[static_cast<size_t>(op.outputs[o])] = std::move(stack[o]);
    }
    std::vector<c10::IValue> out;
    out.reserve(graph_.outputs.size());
    for (int slot : graph_.outputs) out.push_back(slots[static_cast<size_t>(slot)]);
    return out;
  }

 private:
  const CapturedGraph& graph_;
  CpuProfiler* profiler_;
  std::vector<torch::jit::Operation> operations_;
  std::vector<KernelKey> keys_;
};

class EagerBackend : public Backend {
 public:
  std::string name() const override { return "eager"; }
  std::unique_ptr<CompiledGraph> compile(const CapturedGraph& graph, const std::vector<c10::IValue>&,
                                         CpuProfiler* profiler) override {
    return std::make_unique<EagerGraph>(graph, profiler);
  }
};

}  // namespace

std::unique_ptr<Backend> make_eager_backend() { return std::make_unique<EagerBackend>(); }

std::unique_ptr<Backend> make_backend(const std::string& name, bool strict, const std::string& cache_dir) {
  if (name == "eager") return make_eager_backend();
  if (name == "cpp") return make_cpp_backend(strict, cache_dir);
  throw Error(ErrorKind::Usage, fmt::format("unknown backend '{}' (available: cpp, eager)", name));
}

}  // namespace tcprof
