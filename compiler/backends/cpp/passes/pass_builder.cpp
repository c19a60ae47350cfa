#include "compiler/backends/cpp/passes/pass_builder.h"

namespace tcprof {

BuildArg inference_arg(const Arg& a) {
  if (a.kind == Arg::Kind::Slot) return BuildArg(Val{a.slot});
  return a.constant.isTensor() ? BuildArg(c10::IValue(a.constant.toTensor().detach())) : BuildArg(a.constant);
}

Val PassBuilder::emit(const char* name, const std::vector<BuildArg>& args, const GraphOp* origin, const at::Tensor& example) {
  CapturedGraph& g = ctx_.graph;
  if (!builder_) {
    std::vector<c10::TypePtr> types(static_cast<size_t>(g.num_slots));
    for (size_t s = 0; s < types.size() && s < ctx_.examples.size(); ++s) {
      if (ctx_.examples[s].isTensor()) types[s] = c10::TensorType::get();
    }
    builder_.emplace(g, std::move(types));
  }
  Val v = builder_->emit1(name, args, origin);
  ctx_.examples.resize(static_cast<size_t>(g.num_slots));
  ctx_.examples[static_cast<size_t>(v.slot)] = example;
  return v;
}

std::vector<GraphOp> PassBuilder::take_ops() {
  std::vector<GraphOp> ops = std::move(ctx_.graph.ops);
  ctx_.graph.ops.clear();
  ctx_.graph.ops.reserve(ops.size());
  return ops;
}

void PassBuilder::apply_renames() {
  for (const auto& [from, to] : renamed_) {
    Arg a;
    a.kind = Arg::Kind::Slot;
    a.slot = to;
    replace_uses(ctx_.graph, from, a);
  }
  renamed_.clear();
}

}  // namespace tcprof
