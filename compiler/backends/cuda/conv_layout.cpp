#include "compiler/backends/cuda/conv_layout.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "compiler/backends/compile_steps.h"
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

}  // namespace tcprof
