#include "compiler/backends/cuda/linear_epilogue.h"

#include <map>
#include <set>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/library.h>

#include "compiler/backends/cpp/passes/pass_builder.h"

namespace tcprof {

at::Tensor linear_activation(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                             const std::string& activation) {
  TORCH_CHECK(activation == "relu" || activation == "gelu_tanh", "tcprof::linear_activation: unknown activation '",
              activation, "' (relu or gelu_tanh)");
  const bool gelu = activation == "gelu_tanh";
  std::vector<int64_t> out_sizes = input.sizes().vec();
  out_sizes.back() = weight.size(0);
  int64_t count = 1;  // not -1: with no input features, reshape could not infer it
  for (int64_t d = 0; d + 1 < input.dim(); ++d) count *= input.size(d);
  const at::Tensor rows = input.reshape({count, input.size(-1)});
  at::Tensor out;
  // An empty product (no input features) returns the bias without the activation on the GPU
  // (addmm's early exit), so it takes the path below.
  if (input.is_cuda() && rows.size(1) > 0) {
    // cuBLASLt's epilogue wants the bias contiguous (a parameter always is).
    out = at::_addmm_activation(bias.contiguous(), rows, weight.t(), 1, 1, gelu);
  } else {
    // On the CPU _addmm_activation's GELU is the exact one, not the GPU's tanh form (and its
    // ReLU is not worth anything there): the same product, then the activation.
    out = at::addmm(bias, rows, weight.t());
    if (gelu) {
      at::gelu_(out, "tanh");
    } else {
      at::relu_(out);
    }
  }
  return out.view(out_sizes);
}

namespace {

// The operator's kernel: c10::string_view is the str argument every LibTorch since 1.13 takes.
at::Tensor linear_activation_kernel(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                                    c10::string_view activation) {
  return linear_activation(input, weight, bias, std::string(activation.data(), activation.size()));
}

// The activation an op applies to its first argument, as linear_activation names it, or "".
std::string activation_of(const GraphOp& op) {
  if (op.name == "aten::relu" && op.args.size() == 1) return "relu";
  if (op.name == "aten::gelu" && op.args.size() == 2 && op.args[1].kind == Arg::Kind::Constant &&
      op.args[1].constant.isString() && op.args[1].constant.toStringRef() == "tanh") {
    return "gelu_tanh";
  }
  return "";
}

// A linear the epilogue can take: rows of x against a 2-D weight and a 1-D bias, one floating
// dtype and one device.
bool fits(const PassContext& ctx, const GraphOp& linear) {
  if (linear.name != "aten::linear" || linear.args.size() != 3 || linear.outputs.size() != 1) return false;
  const c10::IValue x = example_value(ctx, linear.args[0]), w = example_value(ctx, linear.args[1]), b = example_value(ctx, linear.args[2]);
  if (!x.isTensor() || !w.isTensor() || !b.isTensor()) return false;  // no bias: nothing for the epilogue to add
  const at::Tensor &xt = x.toTensor(), &wt = w.toTensor(), &bt = b.toTensor();
  return xt.dim() >= 2 && xt.size(-1) > 0 && wt.dim() == 2 && wt.size(0) > 0 && bt.dim() == 1 && bt.size(0) == wt.size(0) && xt.is_floating_point() &&
         wt.scalar_type() == xt.scalar_type() && bt.scalar_type() == xt.scalar_type() && wt.device() == xt.device() &&
         bt.device() == xt.device();
}

}  // namespace

std::vector<std::string> fuse_linear_activation(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  const std::vector<int> readers = reader_counts(g);  // a graph output counts as a reader
  std::map<int, size_t> activation_of_slot;  // a linear's output -> the activation that alone reads it
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    if (!activation_of(op).empty() && op.args[0].kind == Arg::Kind::Slot && readers[static_cast<size_t>(op.args[0].slot)] == 1 &&
        op.outputs.size() == 1 && ctx.examples[static_cast<size_t>(op.outputs[0])].isTensor()) {
      activation_of_slot[op.args[0].slot] = i;
    }
  }
  std::vector<std::string> fused;
  if (activation_of_slot.empty()) return fused;
  PassBuilder b(ctx);
  std::vector<GraphOp> original = b.take_ops();
  std::set<size_t> absorbed;
  for (size_t i = 0; i < original.size(); ++i) {
    if (absorbed.count(i)) continue;
    GraphOp& op = original[i];
    auto act = op.outputs.size() == 1 ? activation_of_slot.find(op.outputs[0]) : activation_of_slot.end();
    if (act == activation_of_slot.end() || !fits(ctx, op)) {
      g.ops.push_back(std::move(op));
      continue;
    }
    const GraphOp& activation = original[act->second];
    const std::string name = activation_of(activation);
    const at::Tensor out = ctx.examples[static_cast<size_t>(activation.outputs[0])].toTensor();  // a copy: emit grows examples
    Val v = b.emit(kLinearActivationOp, {inference_arg(op.args[0]), inference_arg(op.args[1]), inference_arg(op.args[2]), name.c_str()}, &op, out);
    b.rename(activation.outputs[0], v.slot);
    absorbed.insert(act->second);
    fused.push_back(fmt::format("linear_{} (cuBLASLt epilogue): aten::linear, {}", name == "relu" ? "relu" : "gelu", activation.name));
  }
  b.apply_renames();
  return fused;
}

}  // namespace tcprof

// One TORCH_LIBRARY per namespace and process: a program must not link both libtcprof.so and the
// static compiler library.
TORCH_LIBRARY(tcprof, m) {
  m.def("linear_activation(Tensor input, Tensor weight, Tensor bias, str activation) -> Tensor",
        &tcprof::linear_activation_kernel);
}
