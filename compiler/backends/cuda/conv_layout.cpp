#include "compiler/backends/cuda/conv_layout.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "compiler/autodiff/graph_builder.h"
#include "compiler/backends/compile_steps.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/runtime/device_timer.h"

namespace tcprof {
namespace {

bool is_conv(const std::string& name) { return name == "aten::conv2d" || name == "aten::_convolution" || name == "aten::convolution"; }

// The device's time for one run of the graph, the median of three after a warm-up.
int64_t graph_ns(const CapturedGraph& g, const std::vector<c10::IValue>& inputs, c10::Device device) {
  example_run(g, inputs);
  std::vector<int64_t> samples;
  for (int i = 0; i < 3; ++i) {
    const int64_t start = now_ns_after_device(device);
    example_run(g, inputs);
    samples.push_back(now_ns_after_device(device) - start);
  }
  std::sort(samples.begin(), samples.end());
  return samples[1];
}

}  // namespace

bool choose_conv_channels_last(CapturedGraph& g, const std::vector<c10::IValue>& inputs, std::string* why) {
  std::vector<Arg*> weights;
  for (GraphOp& op : g.ops) {
    if (!is_conv(op.name) || op.args.size() < 2 || op.args[1].kind != Arg::Kind::Constant || !op.args[1].constant.isTensor()) continue;
    const at::Tensor& w = op.args[1].constant.toTensor();
    if (w.dim() == 4 && w.is_cuda() && w.is_floating_point()) weights.push_back(&op.args[1]);
  }
  if (weights.empty()) return false;
  const c10::Device device = weights.front()->constant.toTensor().device();
  std::vector<at::Tensor> nchw;
  for (Arg* w : weights) nchw.push_back(w->constant.toTensor());
  const int64_t nchw_ns = graph_ns(g, inputs, device);
  for (Arg* w : weights) w->constant = w->constant.toTensor().contiguous(at::MemoryFormat::ChannelsLast);
  const int64_t channels_last_ns = graph_ns(g, inputs, device);
  // A 3% margin: a layout change that measures about the same is not worth its risk.
  const bool keep = static_cast<double>(channels_last_ns) < 0.97 * static_cast<double>(nchw_ns);
  if (!keep) {
    for (size_t i = 0; i < weights.size(); ++i) weights[i]->constant = nchw[i];
  }
  if (why) {
    *why = fmt::format("{} convolutions {}: the graph took {:.3f} ms with NCHW weights, {:.3f} ms with channels-last", weights.size(),
                       keep ? "in channels-last" : "left in NCHW", nchw_ns / 1e6, channels_last_ns / 1e6);
  }
  return keep;
}

int split_conv_bias(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  std::vector<c10::TypePtr> types(static_cast<size_t>(g.num_slots));
  for (size_t s = 0; s < types.size() && s < ctx.examples.size(); ++s) {
    // (An undefined tensor, the attention weights native multi-head attention does not return, has no type to give.)
    if (ctx.examples[s].isTensor() && ctx.examples[s].toTensor().defined()) types[s] = c10::TensorType::create(ctx.examples[s].toTensor());
  }
  GraphBuilder builder(g, types);
  int count = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    GraphOp& conv = g.ops[i];
    if (conv.name != "aten::conv2d" || conv.args.size() < 3 || conv.outputs.size() != 1) continue;
    const Arg& bias = conv.args[2];
    if (bias.kind != Arg::Kind::Constant || !bias.constant.isTensor() || bias.constant.toTensor().dim() != 1) continue;
    const int y = conv.outputs[0];
    if (!types[static_cast<size_t>(y)]) continue;
    // Detached: a parameter that requires grad cannot be a TorchScript constant (inference graph).
    const at::Tensor b = bias.constant.toTensor().detach().reshape({1, -1, 1, 1});
    const GraphOp origin = conv;
    const Val sum = builder.emit1("aten::add", {Val{y}, c10::IValue(b)}, &origin);  // appended at the end
    GraphOp add = std::move(g.ops.back());
    g.ops.pop_back();
    Arg none;
    none.constant = c10::IValue();
    g.ops[i].args[2] = none;
    Arg to;
    to.kind = Arg::Kind::Slot;
    to.slot = sum.slot;
    replace_uses(g, y, to);  // every later reader and the graph's outputs read the sum (not the add: out of the list)
    g.ops.insert(g.ops.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(add));
    ctx.examples.resize(static_cast<size_t>(g.num_slots));
    ctx.examples[static_cast<size_t>(sum.slot)] = ctx.examples[static_cast<size_t>(y)];  // the biased output, until the re-run
    ++i;
    ++count;
  }
  ctx.examples.resize(static_cast<size_t>(g.num_slots));
  return count;
}

}  // namespace tcprof
