// Convolutions of a training graph in channels-last (NHWC) memory order. A training graph's
// convolutions and their backward run through LibTorch (the weights change every step, so nothing
// is prepacked): on an NCHW tensor LibTorch's oneDNN path reorders the activations into oneDNN's
// layout and back at every call, forward and backward; on an NHWC one it reads them as they are.
// Inductor's layout optimisation makes the same choice for graphs with convolutions.
//
// Each 2-D convolution whose input is not channels-last gets `contiguous(channels_last)` in front
// of it. LibTorch's ops keep the memory order of their inputs and the generated kernels write
// theirs in the order eager did, so the values between convolutions stay NHWC and the copy runs
// once, on the graph's input: the pass inserts a copy before every convolution, computes the
// examples again (`examples_again`: every layout after a copy changed) and removes the copies of
// values that are channels-last now.
#include <functional>
#include <map>

#include <ATen/core/jit_type.h>

#include "compiler/autodiff/graph_builder.h"
#include "compiler/backends/cpp/passes/graph_passes.h"

namespace tcprof {
namespace {

bool is_conv2d_on_nchw(const GraphOp& op, const std::vector<c10::IValue>& examples) {
  if (op.name != "aten::conv2d" || op.args.size() < 2 || op.args[0].kind != Arg::Kind::Slot) return false;
  const c10::IValue& x = examples[static_cast<size_t>(op.args[0].slot)];
  if (!x.isTensor()) return false;
  const at::Tensor& t = x.toTensor();
  return t.dim() == 4 && t.is_floating_point() && t.device().is_cpu() && !t.is_contiguous(c10::MemoryFormat::ChannelsLast);
}

}  // namespace

int convolutions_channels_last(PassContext& ctx, const std::function<void()>& examples_again) {
  CapturedGraph& g = ctx.graph;
  std::vector<size_t> convs;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (is_conv2d_on_nchw(g.ops[i], ctx.examples)) convs.push_back(i);
  }
  if (convs.empty()) return 0;
  std::vector<c10::TypePtr> types;
  for (const auto& v : ctx.examples) types.push_back(v.isTensor() ? c10::TensorType::get() : nullptr);
  GraphBuilder builder(g, types);
  const size_t original = g.ops.size();
  std::map<int, int> converted;          // input slot -> its channels-last copy
  std::map<size_t, size_t> copy_before;  // conv op -> the copy op that must run before it
  for (size_t i : convs) {
    int x = g.ops[i].args[0].slot;
    auto it = converted.find(x);
    if (it == converted.end()) {
      GraphOp origin = g.ops[i];  // emit appends to g.ops: no reference into it across the call
      Val copy = builder.emit1("aten::contiguous",
                               {Val{x}, kw("memory_format", static_cast<int64_t>(c10::MemoryFormat::ChannelsLast))}, &origin);
      it = converted.emplace(x, copy.slot).first;
      copy_before[i] = g.ops.size() - 1;
    }
    g.ops[i].args[0].slot = it->second;
  }
  // The copies were appended; each moves to just before the first convolution that reads it.
  std::vector<GraphOp> ordered;
  ordered.reserve(g.ops.size());
  for (size_t i = 0; i < original; ++i) {
    auto copy = copy_before.find(i);
    if (copy != copy_before.end()) ordered.push_back(std::move(g.ops[copy->second]));
    ordered.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(ordered);
  // Most copies were of a convolution's output, which is channels-last now: those go again.
  examples_again();
  std::vector<bool> dead(g.ops.size(), false);
  std::map<int, int> source_of;  // copy slot -> the value it copied, for the copies that went
  int copies = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    GraphOp& op = g.ops[i];
    for (Arg& a : op.args) {
      auto s = a.kind == Arg::Kind::Slot ? source_of.find(a.slot) : source_of.end();
      if (s != source_of.end()) a.slot = s->second;
    }
    if (op.name != "aten::contiguous" || op.outputs.size() != 1 || converted.count(op.args[0].slot) == 0 ||
        converted[op.args[0].slot] != op.outputs[0]) {
      continue;
    }
    const at::Tensor& x = ctx.examples[static_cast<size_t>(op.args[0].slot)].toTensor();
    if (x.is_contiguous(c10::MemoryFormat::ChannelsLast)) {
      source_of[op.outputs[0]] = op.args[0].slot;
      dead[i] = true;
    } else {
      ++copies;
    }
  }
  erase_ops(g, dead);
  return copies;
}

}  // namespace tcprof
