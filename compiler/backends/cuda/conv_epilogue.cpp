#include "compiler/backends/cuda/conv_epilogue.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <set>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/library.h>

#include "compiler/backends/cpp/passes/pass_builder.h"
#include "core/error.h"
#include "core/log.h"

namespace tcprof {
namespace {

// Set once cuDNN has refused a fused call in this process: the calls after it go one by one
// without asking again (and without an exception each call).
std::atomic<bool> cudnn_refused{false};

bool defined(const c10::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// The convolution's output is a fresh tensor: the add and the ReLU go into it.
at::Tensor conv_relu_unfused(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                             const c10::optional<at::Tensor>& residual, at::IntArrayRef stride, at::IntArrayRef padding,
                             at::IntArrayRef dilation, int64_t groups) {
  at::Tensor out = at::conv2d(input, weight, defined(bias) ? *bias : at::Tensor(), stride, padding, dilation, groups);
  if (defined(residual)) out.add_(*residual);
  return out.relu_();
}

}  // namespace

at::Tensor conv_relu(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                     const c10::optional<at::Tensor>& residual, at::IntArrayRef stride, at::IntArrayRef padding,
                     at::IntArrayRef dilation, int64_t groups) {
  // The compile's example run makes the first call, so a refusal comes then, not inside a CUDA
  // graph's capture (which replays calls that already ran).
  if (input.is_cuda() && !cudnn_refused.load(std::memory_order_relaxed)) {
    const c10::optional<at::Tensor> b = defined(bias) ? bias : c10::nullopt;
    try {
      if (defined(residual)) {
        return at::cudnn_convolution_add_relu(input, weight, *residual, at::Scalar(1.0), b, stride, padding, dilation, groups);
      }
      return at::cudnn_convolution_relu(input, weight, b, stride, padding, dilation, groups);
    } catch (const c10::Error& e) {
      // No engine for these tensors, or a LibTorch without cuDNN: said once, then one by one.
      if (!cudnn_refused.exchange(true)) {
        log(LogChannel::Fusion, "cuDNN refused a fused convolution ({}); convolutions with a ReLU run it after the "
            "convolution from now on", std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
      }
    }
  }
  return conv_relu_unfused(input, weight, bias, residual, stride, padding, dilation, groups);
}

bool conv_epilogues_from_env() {
  const char* env = std::getenv("TCPROF_CUDA_CONV_EPILOGUES");
  if (!env || std::string(env).empty() || std::string(env) == "0") return false;
  if (std::string(env) == "1") return true;
  throw Error(ErrorKind::Usage, fmt::format("TCPROF_CUDA_CONV_EPILOGUES='{}': use 1 to fuse convolutions' ReLUs into cuDNN, "
                                            "0 or unset to leave them to the generated kernels",
                                            env));
}

namespace {

at::Tensor conv_relu_kernel(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                            const c10::optional<at::Tensor>& residual, at::IntArrayRef stride, at::IntArrayRef padding,
                            at::IntArrayRef dilation, int64_t groups) {
  return conv_relu(input, weight, bias, residual, stride, padding, dilation, groups);
}

bool is_tensor(const c10::IValue& v) { return v.isTensor() && v.toTensor().defined(); }

// A convolution the fused call can take: conv2d with a constant 4-D weight, an optional 1-D bias,
// and numeric stride, padding, dilation and groups ("same" padding is a string: left alone).
bool fits(const PassContext& ctx, const GraphOp& conv) {
  if (conv.name != "aten::conv2d" || conv.args.size() != 7 || conv.outputs.size() != 1) return false;
  for (size_t i = 3; i < 7; ++i) {
    if (conv.args[i].kind != Arg::Kind::Constant) return false;
  }
  // Two values each: conv2d expands a single one, cuDNN's fused calls do not.
  for (size_t i = 3; i < 6; ++i) {
    if (!conv.args[i].constant.isIntList() || conv.args[i].constant.toIntList().size() != 2) return false;
  }
  if (!conv.args[6].constant.isInt()) return false;
  // A bias passed in as a value must be a tensor (an optional one that is None has no type to give).
  if (conv.args[2].kind == Arg::Kind::Slot && !is_tensor(example_value(ctx, conv.args[2]))) return false;
  const c10::IValue x = example_value(ctx, conv.args[0]), w = example_value(ctx, conv.args[1]), b = example_value(ctx, conv.args[2]);
  if (!is_tensor(x) || !is_tensor(w) || x.toTensor().dim() != 4 || w.toTensor().dim() != 4) return false;
  if (!x.toTensor().is_floating_point() || w.toTensor().scalar_type() != x.toTensor().scalar_type()) return false;
  return !is_tensor(b) || (b.toTensor().dim() == 1 && b.toTensor().scalar_type() == x.toTensor().scalar_type());
}

// What follows a convolution that the fused call can absorb: the ReLU, or the add and the ReLU.
struct Epilogue {
  size_t relu = 0;
  bool has_add = false;
  size_t add = 0;
  Arg residual;
};

}  // namespace

std::vector<std::string> fuse_conv_relu(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  std::vector<std::string> fused;
  for (const GraphOp& op : g.ops) {
    // The fused op reads its inputs where the ReLU was: a write between the convolution and its
    // ReLU would change what it reads (rare after functionalization; not worth ordering checks).
    if (writes_in_place(op)) return fused;
  }
  const std::vector<int> readers = reader_counts(g);  // a graph output counts as a reader
  auto single_reader = [&](const Arg& a) { return a.kind == Arg::Kind::Slot && readers[static_cast<size_t>(a.slot)] == 1; };
  std::map<int, size_t> relu_of;  // slot -> the ReLU that alone reads it
  std::map<int, size_t> add_of;   // slot -> the add that alone reads it
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    if (op.name == "aten::relu" && op.args.size() == 1 && op.outputs.size() == 1 && single_reader(op.args[0])) relu_of[op.args[0].slot] = i;
    if (op.name == "aten::add" && op.args.size() == 3 && op.outputs.size() == 1 && op.args[2].kind == Arg::Kind::Constant &&
        op.args[2].constant.isScalar() && op.args[2].constant.toScalar().toDouble() == 1.0) {
      for (const Arg& a : {op.args[0], op.args[1]}) {
        if (single_reader(a)) add_of[a.slot] = i;
      }
    }
  }
  if (relu_of.empty()) return fused;
  // Each convolution's epilogue, where it has one the fused call takes.
  std::map<size_t, Epilogue> epilogues;
  std::set<size_t> claimed;  // adds and ReLUs already absorbed by a convolution
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& conv = g.ops[i];
    if (!fits(ctx, conv)) continue;
    const int y = conv.outputs[0];
    Epilogue e;
    if (auto r = relu_of.find(y); r != relu_of.end()) {
      e.relu = r->second;
    } else if (auto a = add_of.find(y); a != add_of.end() && !claimed.count(a->second)) {
      const GraphOp& add = g.ops[a->second];
      const Arg& other = add.args[0].kind == Arg::Kind::Slot && add.args[0].slot == y ? add.args[1] : add.args[0];
      auto r2 = relu_of.find(add.outputs[0]);
      const c10::IValue z = example_value(ctx, other), out = ctx.examples[static_cast<size_t>(y)];
      if (r2 == relu_of.end() || !is_tensor(z) || !is_tensor(out) || z.toTensor().sizes() != out.toTensor().sizes() ||
          z.toTensor().scalar_type() != out.toTensor().scalar_type() || z.toTensor().device() != out.toTensor().device()) {
        continue;
      }
      e.has_add = true, e.add = a->second, e.relu = r2->second, e.residual = other;
    } else {
      continue;
    }
    // The fused op sits where the ReLU was: its inputs, the residual too, are all computed by
    // then, and with no in-place write in the graph they still hold what the convolution read.
    claimed.insert(e.relu);
    if (e.has_add) claimed.insert(e.add);
    epilogues[i] = e;
  }
  if (epilogues.empty()) return fused;
  PassBuilder b(ctx);
  std::vector<GraphOp> original = b.take_ops();
  std::map<size_t, size_t> conv_of_relu;
  for (const auto& [conv, e] : epilogues) conv_of_relu[e.relu] = conv;
  for (size_t i = 0; i < original.size(); ++i) {
    if (epilogues.count(i)) continue;  // emitted where its ReLU is
    const auto r = conv_of_relu.find(i);
    if (r == conv_of_relu.end()) {
      if (!claimed.count(i)) g.ops.push_back(std::move(original[i]));
      continue;
    }
    const GraphOp& conv = original[r->second];
    const Epilogue& e = epilogues[r->second];
    const GraphOp& relu = original[i];
    const at::Tensor out = ctx.examples[static_cast<size_t>(relu.outputs[0])].toTensor();  // a copy: emit grows examples
    BuildArg residual = e.has_add ? inference_arg(e.residual) : BuildArg(c10::IValue());
    Val v = b.emit(kConvReluOp,
                   {inference_arg(conv.args[0]), inference_arg(conv.args[1]), inference_arg(conv.args[2]), residual, conv.args[3].constant,
                    conv.args[4].constant, conv.args[5].constant, conv.args[6].constant},
                   &conv, out);
    b.rename(relu.outputs[0], v.slot);
    fused.push_back(e.has_add ? "conv_add_relu (cuDNN epilogue): aten::conv2d, aten::add, aten::relu"
                              : "conv_relu (cuDNN epilogue): aten::conv2d, aten::relu");
  }
  b.apply_renames();
  return fused;
}

}  // namespace tcprof

TORCH_LIBRARY_FRAGMENT(tcprof, m) {
  m.def("conv_relu(Tensor input, Tensor weight, Tensor? bias, Tensor? residual, int[] stride, int[] padding, "
        "int[] dilation, int groups) -> Tensor",
        &tcprof::conv_relu_kernel);
}
