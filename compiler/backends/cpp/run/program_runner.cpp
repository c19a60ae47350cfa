#include "compiler/backends/cpp/run/program_runner.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "compiler/backends/backend.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cpp/run/autotune_race.h"
#include "compiler/backends/cpp/run/onednn_channel_ops.h"
#include "compiler/backends/cpp/run/linear_gemm.h"
#include "compiler/backends/cpp/run/mkl_packed_linear.h"
#include "compiler/backends/cpp/run/onednn_gemm.h"
#include "compiler/frontend/guards.h"
#include "compiler/backends/cpp/lower/index_space.h"
#include "compiler/torch_compat.h"
#include "compiler/toolchain/kernel_library.h"
#include "core/clock.h"
#include "core/error.h"

namespace tcprof {
namespace {

c10::ScalarType scalar_type(ElemType t) {
  switch (t) {
    case ElemType::F32: return at::kFloat;
    case ElemType::F64: return at::kDouble;
    case ElemType::I64: return at::kLong;
    case ElemType::I32: return at::kInt;
    case ElemType::BF16: return at::kBFloat16;
    case ElemType::F16: return at::kHalf;
    case ElemType::Bool: return at::kBool;
  }
  return at::kFloat;
}

// Inputs each node reads, transitively.
void inputs_of(const Kernel& k, int node, std::vector<bool>& seen, std::vector<int>& out) {
  if (seen[static_cast<size_t>(node)]) return;
  seen[static_cast<size_t>(node)] = true;
  const ExprNode& n = k.nodes[static_cast<size_t>(node)];
  if (n.op == ExprOp::Load) out.push_back(n.input);
  for (int a : n.args) inputs_of(k, a, seen, out);
}

}  // namespace

ProgramRunner::ProgramRunner(CapturedGraph graph, ScheduledProgram program, std::shared_ptr<LoadedLibrary> library,
                             std::vector<KernelCall> kernel_calls, std::vector<KernelFn> window_fns, CpuProfiler* profiler,
                             c10::Device device)
    : graph_(std::move(graph)), program_(std::move(program)), library_(std::move(library)),
      kernel_calls_(std::move(kernel_calls)), window_fns_(std::move(window_fns)), device_(device), profiler_(profiler) {
  for (const auto& op : graph_.ops) operations_.push_back(op_operation(op));
  for (const auto& k : program_.program.kernels) {
    std::vector<std::vector<int>> per_output;
    for (const auto& o : k.outputs) {
      std::vector<bool> seen(k.nodes.size(), false);
      std::vector<int> ins;
      inputs_of(k, o.expr, seen, ins);
      if (ins.size() == k.inputs.size()) ins.clear();  // reads them all: same shape by construction
      per_output.push_back(std::move(ins));
    }
    output_inputs_.push_back(std::move(per_output));
  }
  window_uses_extern_.assign(program_.program.window_kernels.size(), false);
  prepared_linears_.resize(program_.program.window_kernels.size());
  gemm_method_.assign(program_.program.window_kernels.size(), -1);
  plan_releases();
  std::vector<bool> fallback(graph_.ops.size(), false);
  for (const auto& f : program_.fallbacks) fallback[static_cast<size_t>(f.op)] = true;
  if (profiler_) {
    for (const auto& step : program_.program.steps) {
      switch (step.kind) {
        case Step::Kind::Extern: {
          const std::string name = graph_.step_prefix + graph_.ops[static_cast<size_t>(step.index)].name;
          step_keys_.push_back(profiler_->key(name, fallback[static_cast<size_t>(step.index)] ? "fallback" : "extern"));
          break;
        }
        case Step::Kind::Kernel:
          step_keys_.push_back(profiler_->key(graph_.step_prefix + program_.program.kernels[static_cast<size_t>(step.index)].name,
                                             "generated"));
          break;
        case Step::Kind::Window: step_keys_.push_back(window_step_key(static_cast<size_t>(step.index))); break;
        case Step::Kind::Onednn:
          step_keys_.push_back(profiler_->key(graph_.step_prefix + program_.program.onednn_convs[static_cast<size_t>(step.index)].name,
                                             "extern"));
          break;
        case Step::Kind::ChannelOp:
          step_keys_.push_back(profiler_->key(graph_.step_prefix + program_.program.channel_ops[static_cast<size_t>(step.index)].name,
                                             "extern"));
          break;
      }
    }
  }
}

// A value is dropped after the last step that reads or writes it (graph outputs never): LibTorch's
// interpreter frees intermediates as it goes, so its allocator hands the next op memory that is
// still in cache; holding every value to the end of the graph made each call fault in fresh pages
// (ConvNeXt-T: ~2 ms of 120) and made peak memory the sum of all values instead of the live set.
void ProgramRunner::plan_releases() {
  const auto& steps = program_.program.steps;
  std::vector<size_t> last(static_cast<size_t>(graph_.num_slots), SIZE_MAX);
  auto touch_op = [&](int op_index, size_t step) {
    const GraphOp& op = graph_.ops[static_cast<size_t>(op_index)];
    for (int slot : slots_read(op)) last[static_cast<size_t>(slot)] = step;
    for (int slot : op.outputs) last[static_cast<size_t>(slot)] = step;
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    switch (step.kind) {
      case Step::Kind::Extern: touch_op(step.index, s); break;
      // A kernel's inputs and outputs are its ops' arguments and results (and the ops run one by
      // one when the layout does not fit).
      case Step::Kind::Kernel:
        for (int op : program_.program.kernels[static_cast<size_t>(step.index)].ops) touch_op(op, s);
        break;
      case Step::Kind::Window: {
        for (int op : covered_ops(program_.program.window_kernels[static_cast<size_t>(step.index)])) touch_op(op, s);
        break;
      }
      case Step::Kind::Onednn:
        for (int op : step_ops(program_.program.onednn_convs[static_cast<size_t>(step.index)])) touch_op(op, s);
        break;
      case Step::Kind::ChannelOp: touch_op(program_.program.channel_ops[static_cast<size_t>(step.index)].op, s); break;
    }
  }
  for (int slot : graph_.outputs) last[static_cast<size_t>(slot)] = SIZE_MAX;
  release_after_.assign(steps.size(), {});
  for (size_t slot = 0; slot < last.size(); ++slot) {
    if (last[slot] != SIZE_MAX) release_after_[last[slot]].push_back(static_cast<int>(slot));
  }
}

void ProgramRunner::run_extern(int index, std::vector<c10::IValue>& slots, const SymBindings& bindings) {
  const GraphOp& op = graph_.ops[static_cast<size_t>(index)];
  torch::jit::Stack stack;
  stack.reserve(op.args.size());
  for (const Arg& arg : op.args) stack.push_back(evaluate_arg(arg, slots, bindings));
  try {
    operations_[static_cast<size_t>(index)](stack);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Input, fmt::format("{} at {}:{} failed: {}", op.name, op.loc.file, op.loc.line,
                                              e.what_without_backtrace()));
  }
  for (size_t o = 0; o < op.outputs.size(); ++o) slots[static_cast<size_t>(op.outputs[o])] = std::move(stack[o]);
}

bool ProgramRunner::run_kernel(size_t index, std::vector<c10::IValue>& slots) {
  const Kernel& k = program_.program.kernels[index];
  const size_t n = k.inputs.size();
  std::vector<at::Tensor> ins(n);
  std::vector<OperandLayout> layouts(n);
  std::vector<const std::vector<int64_t>*> shapes(n);
  for (size_t i = 0; i < n; ++i) {
    const KernelInput& in = k.inputs[i];
    if (in.slot >= 0) {
      const c10::IValue& v = slots[static_cast<size_t>(in.slot)];
      if (!v.isTensor()) return false;
      ins[i] = v.toTensor();
    } else {
      ins[i] = program_.constants[static_cast<size_t>(in.constant)];
    }
    if (ins[i].scalar_type() != scalar_type(in.type) || ins[i].device() != device_) return false;
    layouts[i] = {ins[i].sizes().vec(), ins[i].strides().vec()};
    shapes[i] = &layouts[i].sizes;
  }
  std::vector<int64_t> full;
  if (!broadcast_shapes(shapes, &full)) return false;
  const int row_dims = k.kind != KernelKind::Pointwise ? k.row_dims : 0;
  if (static_cast<int>(full.size()) < row_dims) return false;
  // Every output must span the whole index space (a value fused at a smaller shape is not).
  for (size_t o = 0; o < k.outputs.size(); ++o) {
    const auto& subset = output_inputs_[index][o];
    if (subset.empty()) continue;
    std::vector<const std::vector<int64_t>*> sub;
    for (int i : subset) sub.push_back(shapes[static_cast<size_t>(i)]);
    std::vector<int64_t> shape;
    if (!broadcast_shapes(sub, &shape) || shape != full) return false;
  }
  // Outputs in eager's memory order: the loop nest walks the permuted dims and each output is
  // allocated in that order, then viewed back in the logical one.
  if (!k.order.empty()) permute_index_space(k.order, full, layouts);
  IndexSpace space;
  if (!canonicalize(full, row_dims, layouts, k.rank, &space)) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!inner_compatible(k.inputs[i].inner, space.strides[i].back(), space.sizes.back())) return false;
  }
  // A row kernel's reductions have one value per outer element, a column kernel's one per row element.
  std::vector<int64_t> reduced_shape(full.begin(), full.end() - row_dims);
  if (k.kind == KernelKind::Column) reduced_shape.assign(full.end() - row_dims, full.end());
  std::vector<at::Tensor> outs(k.outputs.size());
  for (size_t o = 0; o < k.outputs.size(); ++o) {
    const KernelOutput& out = k.outputs[o];
    auto type = scalar_type(k.nodes[static_cast<size_t>(out.expr)].type);
    if (!out.per_row) {
      outs[o] = at::empty(full, at::TensorOptions().dtype(type).device(device_));
      if (!k.order.empty()) {
        std::vector<int64_t> inverse(k.order.size());
        for (size_t d = 0; d < k.order.size(); ++d) inverse[static_cast<size_t>(k.order[d])] = static_cast<int64_t>(d);
        outs[o] = outs[o].permute(inverse);
      }
    } else {
      std::vector<int64_t> shape = reduced_shape;
      if (out.keepdim && k.kind == KernelKind::Column) shape.insert(shape.begin(), full.size() - reduced_shape.size(), 1);
      else if (out.keepdim) shape.resize(full.size(), 1);
      outs[o] = at::empty(shape, at::TensorOptions().dtype(type).device(device_));
    }
  }
  int64_t outer_numel = 1;
  for (size_t d = 0; d + 1 < space.sizes.size(); ++d) outer_numel *= space.sizes[d];
  bool empty = outer_numel == 0 || (row_dims == 0 && space.sizes.back() == 0);
  if (k.kind == KernelKind::Column && outer_numel == 0) {  // sums of nothing: zeros, as eager's
    for (size_t o = 0; o < outs.size(); ++o) {
      if (k.outputs[o].per_row) outs[o].zero_();
    }
  }
  if (!empty) {
    std::vector<const void*> in_ptrs(n);
    for (size_t i = 0; i < n; ++i) in_ptrs[i] = ins[i].data_ptr();
    std::vector<void*> out_ptrs(outs.size());
    for (size_t o = 0; o < outs.size(); ++o) out_ptrs[o] = outs[o].data_ptr();
    std::vector<int64_t> strides;
    strides.reserve(n * space.sizes.size());
    for (const auto& s : space.strides) strides.insert(strides.end(), s.begin(), s.end());
    if (!kernel_calls_[index](in_ptrs.data(), out_ptrs.data(), space.sizes.data(), strides.data())) return false;
  }
  for (size_t o = 0; o < outs.size(); ++o) slots[static_cast<size_t>(k.outputs[o].slot)] = std::move(outs[o]);
  return true;
}

// The GEMMs LibTorch's op stays planned for, the kernel having to beat it by the margin: one
// against a prepared weight (to be worth the copy) and one on values of the graph (an unknown
// library against the one eager uses).
static bool libtorch_planned(const WindowKernel& n) {
  return n.kind == WindowKernel::Kind::LinearGemm || n.kind == WindowKernel::Kind::Gemm;
}

bool ProgramRunner::has_prepared_linears(size_t k) const {
  const WindowKernel& n = program_.program.window_kernels[k];
  return n.kind == WindowKernel::Kind::LinearGemm || (n.kind == WindowKernel::Kind::Attention && n.attention.heads > 0);
}

void ProgramRunner::prepare_linears(size_t k) {
  prepared_linear(k, 0);
  if (program_.program.window_kernels[k].kind == WindowKernel::Kind::Attention) prepared_linear(k, 1);
}

LinearEpilogueFn ProgramRunner::linear_epilogue(size_t k) const {
  return program_.program.window_kernels[k].generated_epilogue() && k < window_fns_.size() ? window_fns_[k] : nullptr;
}

std::vector<LinearGemmMethod> ProgramRunner::gemm_methods(size_t k) const {
  return linear_gemm_methods(linear_epilogue(k) != nullptr);
}

ProgramRunner::PreparedLinears ProgramRunner::make_prepared_linears(size_t k, std::optional<LinearGemmMethod> method) const {
  const WindowKernel& n = program_.program.window_kernels[k];
  PreparedLinears out;
  for (int which = 0; which < (n.kind == WindowKernel::Kind::Attention ? 2 : 1); ++which) {
    const int weight = which == 0 ? n.weight_slot : n.attention.proj_weight;
    const int bias = which == 0 ? n.bias_slot : n.attention.proj_bias;
    out[static_cast<size_t>(which)] = std::make_shared<const PreparedLinear>(
        program_.constants[static_cast<size_t>(weight)], bias >= 0 ? &program_.constants[static_cast<size_t>(bias)] : nullptr,
        n.n, which == 0 ? n.activation : WindowKernel::Activation::None, which == 0 ? linear_epilogue(k) : nullptr, method);
  }
  return out;
}

const PreparedLinear& ProgramRunner::prepared_linear(size_t k, int which) {
  auto& prepared = prepared_linears_[k][static_cast<size_t>(which)];
  if (!prepared) {
    std::optional<LinearGemmMethod> method;
    if (gemm_method_[k] >= 0) method = static_cast<LinearGemmMethod>(gemm_method_[k]);
    try {
      prepared_linears_[k] = make_prepared_linears(k, method);
    } catch (const std::runtime_error&) {  // a cached decision this build cannot run: the planned one
      prepared_linears_[k] = make_prepared_linears(k, std::nullopt);
    }
  }
  return *prepared;
}

bool ProgramRunner::run_window_kernel(size_t index, std::vector<c10::IValue>& slots) {
  const WindowKernel& k = program_.program.window_kernels[index];
  const c10::IValue& v = slots[static_cast<size_t>(k.input_slot)];
  if (!v.isTensor()) return false;
  const at::Tensor& x = v.toTensor();
  if (k.kind == WindowKernel::Kind::Attention) return run_attention(index, slots);
  if (k.kind == WindowKernel::Kind::Gemm) return run_gemm(index, slots);
  if (k.kind == WindowKernel::Kind::ScaledDotProductAttention) return run_scaled_dot_product_attention(index, slots);
  if (k.kind == WindowKernel::Kind::LinearGemv || k.kind == WindowKernel::Kind::LinearGemm) {
    if (x.scalar_type() != at::kFloat || x.dim() < 2 || x.size(-1) != k.c || !x.device().is_cpu() ||
        x.layout() != at::kStrided) {
      return false;
    }
    const at::Tensor& w = program_.constants[static_cast<size_t>(k.weight_slot)];
    const at::Tensor* bias = k.bias_slot >= 0 ? &program_.constants[static_cast<size_t>(k.bias_slot)] : nullptr;
    if (k.kind == WindowKernel::Kind::LinearGemm) {
      slots[static_cast<size_t>(k.output_slot)] = prepared_linear(index, 0)(x);
      return true;
    }
    if (x.dim() != 2 || x.size(0) != 1 || !x.is_contiguous()) return false;
    at::Tensor y = at::empty({1, k.out_features}, x.options());
    at::Tensor row = y.view({k.out_features});
    if (bias != nullptr) at::addmv_out(row, *bias, w, x.view({k.c}));
    else at::mv_out(row, w, x.view({k.c}));
    slots[static_cast<size_t>(k.output_slot)] = std::move(y);
    return true;
  }
  if (x.scalar_type() != at::kFloat || x.dim() != 4 || !x.is_contiguous() || x.size(1) != k.c || x.size(2) != k.h ||
      x.size(3) != k.w || !x.device().is_cpu()) {
    return false;
  }
  if (k.kind == WindowKernel::Kind::MkldnnConv) {
    c10::optional<at::Tensor> bias;
    if (k.bias_slot >= 0) bias = program_.constants[static_cast<size_t>(k.bias_slot)];
    at::Tensor y = at::mkldnn_convolution(x.to_mkldnn(), program_.constants[static_cast<size_t>(k.weight_slot)], bias,
                                          {k.ph, k.pw}, {k.sh, k.sw}, {k.dh, k.dw}, 1);
    slots[static_cast<size_t>(k.output_slot)] = y.to_dense();
    return true;
  }
  if (k.kind == WindowKernel::Kind::Conv1x1Gemm) {
    // out[n] (Cout x HW) = W (Cout x Cin) @ x[n] (Cin x HW) + bias
    const at::Tensor& w = program_.constants[static_cast<size_t>(k.weight_slot)];
    int64_t cout = w.size(0), hw = k.h * k.w;
    at::Tensor w2 = w.view({cout, k.c});
    at::Tensor y = at::empty({x.size(0), cout, k.oh, k.ow}, x.options());
    for (int64_t n = 0; n < x.size(0); ++n) {
      at::Tensor out = y.select(0, n).view({cout, hw});
      at::Tensor in = x.select(0, n).view({k.c, hw});
      if (k.bias_slot >= 0) at::addmm_out(out, program_.constants[static_cast<size_t>(k.bias_slot)].view({cout, 1}), w2, in);
      else at::mm_out(out, w2, in);
    }
    slots[static_cast<size_t>(k.output_slot)] = std::move(y);
    return true;
  }
  at::Tensor y = at::empty({x.size(0), k.c, k.oh, k.ow}, x.options());
  const void* in[3] = {x.data_ptr(), nullptr, nullptr};
  if (k.weight_slot >= 0) in[1] = program_.constants[static_cast<size_t>(k.weight_slot)].data_ptr();
  if (k.bias_slot >= 0) in[2] = program_.constants[static_cast<size_t>(k.bias_slot)].data_ptr();
  void* out[1] = {y.data_ptr()};
  int64_t sizes[1] = {x.size(0)};
  if (x.numel() > 0) window_fns_[index](in, out, sizes, nullptr);
  slots[static_cast<size_t>(k.output_slot)] = std::move(y);
  return true;
}

// a [.., K] (mm: [M, K]) @ b [K, N] (linear: its weight [N, K], transposed) (+ linear's bias) as
// one oneDNN matmul over a's rows, or a batched a [.., M, K] @ b [.., K, N], on the operands' own
// strides. False (LibTorch's op runs) where the leading dimensions of an unbatched a do not fold
// into uniformly spaced rows, oneDNN refuses them, or autograd would have to record the product.
bool ProgramRunner::run_gemm(size_t index, std::vector<c10::IValue>& slots) {
  const WindowKernel& k = program_.program.window_kernels[index];
  const c10::IValue &av = slots[static_cast<size_t>(k.input_slot)], &bv = slots[static_cast<size_t>(k.gemm.b_slot)];
  if (!av.isTensor() || !bv.isTensor()) return false;
  const at::Tensor &a = av.toTensor(), &w = bv.toTensor();
  const at::Tensor* bias = nullptr;
  if (k.gemm.bias_slot >= 0) {
    const c10::IValue& biasv = slots[static_cast<size_t>(k.gemm.bias_slot)];
    if (!biasv.isTensor()) return false;
    bias = &biasv.toTensor();
  }
  if (at::GradMode::is_enabled() && (a.requires_grad() || w.requires_grad() || (bias != nullptr && bias->requires_grad()))) {
    return false;
  }
  if (a.dim() < 2 || w.dim() < 2 || a.numel() == 0) return false;
  const at::Tensor b = k.gemm.b_is_weight ? w.t() : w;
  // Unbatched, a's leading dimensions fold into its rows when each is laid out right after the next
  // (onednn_gemm checks the rest: ranks, batch and inner sizes).
  at::Tensor a2 = a;
  if (b.dim() == 2 && a.dim() > 2) {
    const int64_t last = a.dim() - 1;
    for (int64_t d = 0; d + 1 < last; ++d) {
      if (a.size(d) != 1 && a.stride(d) != a.stride(d + 1) * a.size(d + 1)) return false;
    }
    a2 = a.as_strided({a.numel() / a.size(-1), a.size(-1)}, {a.stride(last - 1), a.stride(-1)});
  }
  std::optional<at::Tensor> y = onednn_gemm(a2, b, bias);
  if (!y) return false;
  std::vector<int64_t> out_sizes = a.sizes().vec();
  out_sizes.back() = b.size(-1);
  slots[static_cast<size_t>(k.output_slot)] = y->dim() == a.dim() ? *y : y->view(out_sizes);
  return true;
}

// q [B, H, T, D], kT [B, H, D, S], v [B, H, S, Dv] with any strides (q and v are usually views
// of one QKV projection); the output is contiguous [B, H, T, Dv]. Rank 3 is one batch, rank 2 one
// head.
bool ProgramRunner::run_attention(size_t index, std::vector<c10::IValue>& slots) {
  const WindowKernel& k = program_.program.window_kernels[index];
  const WindowKernel::AttentionShape& a = k.attention;
  if (a.heads > 0) return run_multi_head_attention(index, slots);
  const c10::IValue &qv = slots[static_cast<size_t>(k.input_slot)], &ktv = slots[static_cast<size_t>(a.kt_slot)],
                    &vv = slots[static_cast<size_t>(a.v_slot)];
  if (!qv.isTensor() || !ktv.isTensor() || !vv.isTensor()) return false;
  const at::Tensor &q = qv.toTensor(), &kt = ktv.toTensor(), &v = vv.toTensor();
  auto fits = [](const at::Tensor& t, int64_t dim, int64_t rows, int64_t cols) {
    return t.scalar_type() == at::kFloat && t.device().is_cpu() && t.layout() == at::kStrided && t.dim() == dim &&
           t.size(-2) == rows && t.size(-1) == cols;
  };
  const int64_t dim = q.dim();
  if (dim < 2 || dim > 4 || !fits(q, dim, a.t, a.d) || !fits(kt, dim, a.d, a.s) || !fits(v, dim, a.s, a.dv)) return false;
  if (q.sizes().slice(0, dim - 2) != kt.sizes().slice(0, dim - 2) || q.sizes().slice(0, dim - 2) != v.sizes().slice(0, dim - 2)) {
    return false;
  }
  slots[static_cast<size_t>(k.output_slot)] = launch_attention(index, q, kt, v);
  return true;
}

// One at::scaled_dot_product_attention call for the chain (the cuda backend's plan): kT
// transposed back to k, the scale as the chain applies it, the mask as is_causal or the kept keys.
bool ProgramRunner::run_scaled_dot_product_attention(size_t index, std::vector<c10::IValue>& slots) {
#if TCPROF_HAVE_SDPA
  const WindowKernel& k = program_.program.window_kernels[index];
  const WindowKernel::AttentionShape& a = k.attention;
  const c10::IValue &qv = slots[static_cast<size_t>(k.input_slot)], &ktv = slots[static_cast<size_t>(a.kt_slot)],
                    &vv = slots[static_cast<size_t>(a.v_slot)];
  if (!qv.isTensor() || !ktv.isTensor() || !vv.isTensor()) return false;
  const at::Tensor &q = qv.toTensor(), &kt = ktv.toTensor(), &v = vv.toTensor();
  const int64_t dim = q.dim();
  if (kt.dim() != dim || v.dim() != dim || q.size(-2) != a.t || q.size(-1) != a.d || kt.size(-2) != a.d || kt.size(-1) != a.s ||
      v.size(-2) != a.s || q.scalar_type() != kt.scalar_type() || q.scalar_type() != v.scalar_type() ||
      q.device() != kt.device() || q.device() != v.device()) {
    return false;
  }
  if (q.sizes().slice(0, dim - 2) != kt.sizes().slice(0, dim - 2) || q.sizes().slice(0, dim - 2) != v.sizes().slice(0, dim - 2)) {
    return false;
  }
  c10::optional<at::Tensor> mask;
  if (a.keep_mask >= 0) {
    mask = program_.constants[static_cast<size_t>(a.keep_mask)];
    if (mask->device() != q.device()) return false;
  }
  const double scale = a.divide ? 1.0 / a.scale : a.scale;
  at::Tensor query = q, key = kt.transpose(-2, -1), value = v;
  if (q.is_cuda()) {
    // The GPU's flash and memory-efficient kernels take 4-D operands whose last dimension is
    // contiguous; anything else runs SDPA's slow math path.
    auto fit = [](at::Tensor t) {
      if (t.stride(-1) != 1) t = t.contiguous();
      while (t.dim() < 4) t = t.unsqueeze(0);
      return t;
    };
    query = fit(query), key = fit(key), value = fit(value);
    if (mask) {
      while (mask->dim() < 4) mask = mask->unsqueeze(0);
    }
    at::Tensor y = at::scaled_dot_product_attention(query, key, value, mask, 0.0, a.causal, scale);
    while (y.dim() > dim) y = y.squeeze(0);
    slots[static_cast<size_t>(k.output_slot)] = y;
    return true;
  }
  slots[static_cast<size_t>(k.output_slot)] = at::scaled_dot_product_attention(query, key, value, mask, 0.0, a.causal, scale);
  return true;
#else
  (void)index;
  (void)slots;
  return false;
#endif
}

// The generated attention kernel on checked operands of equal rank (2 to 4); missing batch or
// head dimensions are size 1 with stride 0. Returns the contiguous output.
at::Tensor ProgramRunner::launch_attention(size_t index, const at::Tensor& q, const at::Tensor& kt, const at::Tensor& v) {
  const int64_t dim = q.dim();
  std::vector<int64_t> out_sizes = q.sizes().vec();
  out_sizes.back() = v.size(-1);
  at::Tensor y = at::empty(out_sizes, q.options());
  int64_t sizes[2] = {dim == 4 ? q.size(0) : 1, dim >= 3 ? q.size(dim - 3) : 1};
  int64_t strides[12];
  int n = 0;
  for (const at::Tensor* t : {&q, &kt, &v}) {
    strides[n++] = dim == 4 ? t->stride(0) : 0;
    strides[n++] = dim >= 3 ? t->stride(dim - 3) : 0;
    strides[n++] = t->stride(dim - 2);
    strides[n++] = t->stride(dim - 1);
  }
  const void* in[3] = {q.data_ptr(), kt.data_ptr(), v.data_ptr()};
  void* out[1] = {y.data_ptr()};
  if (y.numel() > 0) window_fns_[index](in, out, sizes, strides);
  return y;
}

// aten::_native_multi_head_attention as LibTorch computes it (QKV projection, per-head attention,
// output projection), with the attention in the generated kernel over strided views of the
// projection; the weights output is None, as need_weights=False makes it.
bool ProgramRunner::run_multi_head_attention(size_t index, std::vector<c10::IValue>& slots) {
  const WindowKernel& k = program_.program.window_kernels[index];
  const WindowKernel::AttentionShape& a = k.attention;
  const c10::IValue& xv = slots[static_cast<size_t>(k.input_slot)];
  if (!xv.isTensor()) return false;
  const at::Tensor& x = xv.toTensor();
  const int64_t embed = a.d * a.heads;
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu() || x.layout() != at::kStrided || x.dim() != 3 ||
      x.size(1) != a.t || x.size(2) != embed) {
    return false;
  }
  const int64_t b = x.size(0), h = a.heads;
  at::Tensor qkv = prepared_linear(index, 0)(x);  // [B, T, 3E]
  at::Tensor q = qkv.narrow(2, 0, embed).view({b, a.t, h, a.d}).transpose(1, 2);
  at::Tensor kt = qkv.narrow(2, embed, embed).view({b, a.t, h, a.d}).permute({0, 2, 3, 1});
  at::Tensor v = qkv.narrow(2, 2 * embed, embed).view({b, a.t, h, a.d}).transpose(1, 2);
  at::Tensor context = launch_attention(index, q, kt, v).transpose(1, 2).reshape({b, a.t, embed});
  slots[static_cast<size_t>(k.output_slot)] = prepared_linear(index, 1)(context);
  const GraphOp& op = graph_.ops[static_cast<size_t>(k.op)];
  slots[static_cast<size_t>(op.outputs[1])] = at::Tensor();
  return true;
}

bool ProgramRunner::run_onednn(size_t index, std::vector<c10::IValue>& slots, std::vector<BlockedValue>& blocked) {
  const OnednnConv& c = program_.program.onednn_convs[index];
  auto dense = [&](int slot) -> const at::Tensor* {
    const c10::IValue& v = slots[static_cast<size_t>(slot)];
    return v.isTensor() ? &v.toTensor() : nullptr;
  };
  auto held = [&](int slot, ValueLayout layout) -> BlockedValue* {
    if (slot < 0 || layout != ValueLayout::Blocked) return nullptr;
    BlockedValue& b = blocked[static_cast<size_t>(slot)];
    return b.buffer.defined() ? &b : nullptr;
  };
  BlockedValue* in = held(c.input_slot, c.input_layout);
  BlockedValue* res = held(c.residual_slot, c.residual_layout);
  const at::Tensor* res_dense = c.residual_slot >= 0 && !res ? dense(c.residual_slot) : nullptr;
  const at::Tensor* scale = c.scale_slot >= 0 ? dense(c.scale_slot) : nullptr;
  if (c.scale_slot >= 0 && !scale) {
    // A scale is always kept dense; without it LibTorch could not run the step either when the
    // input is held blocked only.
    if (in || res) throw std::runtime_error(fmt::format("{}: the input's per-channel scale %{} is missing", c.name, c.scale_slot));
    return false;
  }
  BlockedValue out_blocked;
  at::Tensor out_dense, pooled;
  const bool want_blocked = c.output_layout != ValueLayout::Dense, want_dense = c.output_layout != ValueLayout::Blocked;
  if (!program_.onednn[index]->run(in, in ? nullptr : dense(c.input_slot), res, res_dense, c.residual_in_place,
                                   want_blocked ? &out_blocked : nullptr, want_dense ? &out_dense : nullptr, scale,
                                   c.pooled_slot >= 0 ? &pooled : nullptr)) {
    return false;
  }
  if (want_blocked) blocked[static_cast<size_t>(c.output_slot)] = std::move(out_blocked);
  if (want_dense) slots[static_cast<size_t>(c.output_slot)] = std::move(out_dense);
  if (c.pooled_slot >= 0) slots[static_cast<size_t>(c.pooled_slot)] = std::move(pooled);
  return true;
}

bool ProgramRunner::run_channel_op(size_t index, std::vector<c10::IValue>& slots, std::vector<BlockedValue>& blocked) {
  const ChainChannelOp& k = program_.program.channel_ops[index];
  std::vector<const BlockedValue*> in_blocked;
  std::vector<const at::Tensor*> in_dense;
  for (int slot : k.input_slots) {
    const BlockedValue& b = blocked[static_cast<size_t>(slot)];
    const c10::IValue& v = slots[static_cast<size_t>(slot)];
    in_blocked.push_back(b.buffer.defined() ? &b : nullptr);
    in_dense.push_back(v.isTensor() ? &v.toTensor() : nullptr);
  }
  BlockedValue out_blocked;
  at::Tensor out_dense;
  const bool want_blocked = k.output_layout != ValueLayout::Dense, want_dense = k.output_layout != ValueLayout::Blocked;
  if (!tcprof::run_channel_op(k, in_blocked, in_dense, want_blocked ? &out_blocked : nullptr, want_dense ? &out_dense : nullptr)) {
    return false;
  }
  if (want_blocked) blocked[static_cast<size_t>(k.output_slot)] = std::move(out_blocked);
  if (want_dense) slots[static_cast<size_t>(k.output_slot)] = std::move(out_dense);
  return true;
}

std::vector<AutotuneChoice> ProgramRunner::measure_autotune(const std::vector<c10::IValue>& example_slots,
                                                            const SymBindings& bindings) {
  std::vector<c10::IValue> slots = example_slots;
  std::vector<AutotuneChoice> choices(program_.program.window_kernels.size());
  // Kernels with the same parameters (a model's repeated blocks) are timed once: ViT's twelve
  // attention blocks took 0.9 s of its cold compile.
  std::map<std::string, size_t> timed;
  for (size_t k = 0; k < choices.size(); ++k) {
    const WindowKernel& n = program_.program.window_kernels[k];
    auto [same, first] = timed.emplace(window_signature(n), k);
    if (!first) {
      choices[k] = choices[same->second];
      continue;
    }
    const std::vector<int> ops = covered_ops(n);
    // Each GEMM method that can run kernel k's linears, prepared before the race (not timed).
    std::vector<LinearGemmMethod> methods;
    std::vector<PreparedLinears> prepared;
    if (has_prepared_linears(k)) {
      for (LinearGemmMethod m : gemm_methods(k)) {
        try {
          prepared.push_back(make_prepared_linears(k, m));
          methods.push_back(m);
        } catch (const std::runtime_error&) {  // cannot run here: not a candidate
        }
      }
      if (prepared.empty()) prepare_linears(k);
      else prepared_linears_[k] = prepared[0];
    }
    // The outputs are released before each run, as the steady state releases them between calls:
    // a run that allocates while the last run's output is alive takes new memory and its page
    // faults (ConvNeXt-T's first GEMM + GELU measured 5.0 ms that way, 2.8 ms in steady state).
    auto release_outputs = [&] {
      slots[static_cast<size_t>(n.output_slot)] = c10::IValue();
      for (int op : ops) {
        for (int out : graph_.ops[static_cast<size_t>(op)].outputs) slots[static_cast<size_t>(out)] = c10::IValue();
      }
    };
    std::function<bool()> kernel = [&] {
      release_outputs();
      return run_window_kernel(k, slots);
    };
    std::function<bool()> libtorch = [&] {
      release_outputs();
      for (int op : ops) run_extern(op, slots, bindings);
      return true;
    };
    // The planned kernel stays unless LibTorch's op is faster by more than the noise
    // (autotune_race.h). A GEMM against a prepared weight is the other way round: LibTorch's linear
    // stays unless the GEMM beats it by the margin, to be worth the weight's copy (memory, and its
    // time at every start): several of ConvNeXt's tied within 1% against a transposed one. So is
    // a GEMM of two graph values (libtorch_planned).
    // Where several GEMM methods can run its linears, each is a kernel candidate (the planned
    // method first), and the fastest that beats the planned candidate by the margin runs.
    const bool copy = libtorch_planned(n);
    std::vector<std::function<bool()>> kernels = {kernel};
    if (prepared.size() > 1) {
      kernels.clear();
      for (size_t m = 0; m < prepared.size(); ++m) {
        kernels.push_back([&, m] {
          prepared_linears_[k] = prepared[m];
          return kernel();
        });
      }
    }
    std::vector<std::function<bool()>> candidates;
    if (copy) candidates.push_back(libtorch);
    candidates.insert(candidates.end(), kernels.begin(), kernels.end());
    if (!copy) candidates.push_back(libtorch);
    RaceOptions options;
    options.min_round_ns = 200'000;
    std::vector<RaceEntry> entries;
    RaceDecision d = race(candidates, options, &entries);
    const size_t first_kernel = copy ? 1 : 0, libtorch_at = copy ? 0 : kernels.size();
    // The kernel's entry: the winner's where a GEMM method won, else the fastest method's.
    size_t kernel_at = first_kernel;
    for (size_t i = first_kernel; i < first_kernel + kernels.size(); ++i) {
      if (entries[i].ran && (!entries[kernel_at].ran || entries[i].best_ns < entries[kernel_at].best_ns)) kernel_at = i;
    }
    if (static_cast<size_t>(d.winner) != libtorch_at) kernel_at = static_cast<size_t>(d.winner);
    const RaceEntry& ke = entries[kernel_at];
    const RaceEntry& le = entries[libtorch_at];
    if (!ke.ran) {  // the kernel cannot run on these inputs: kept as planned, outputs from LibTorch
      if (!prepared.empty()) prepared_linears_[k] = prepared[0];
      libtorch();
      continue;
    }
    const bool libtorch_won = static_cast<size_t>(d.winner) == libtorch_at;
    choices[k] = {true, ke.best_ns, le.best_ns, libtorch_won, ke.noise, le.noise, d.margin};
    if (!methods.empty()) {
      choices[k].gemm_method = static_cast<int>(methods[kernel_at - first_kernel]);
      prepared_linears_[k] = prepared[kernel_at - first_kernel];
    }
    if (methods.size() > 1) {
      for (size_t m = 0; m < methods.size(); ++m) {
        const RaceEntry& e = entries[first_kernel + m];
        if (e.ran) choices[k].gemm_times.push_back({static_cast<int>(methods[m]), e.best_ns, e.noise});
      }
    }
  }
  return choices;
}

// A kernel's profile entry; one whose single op the autotune phase left to LibTorch is recorded
// under that op's name (what ran: `bwd aten::mm`, not `bwd n7_mm_onednn`).
KernelKey ProgramRunner::window_step_key(size_t k) const {
  const WindowKernel& n = program_.program.window_kernels[k];
  if (window_uses_extern_[k] && covered_ops(n).size() == 1) {
    return profiler_->key(graph_.step_prefix + graph_.ops[static_cast<size_t>(n.op)].name, "extern");
  }
  return profiler_->key(graph_.step_prefix + n.name, n.generated() ? "generated" : "extern");
}

std::vector<AutotuneDecision> ProgramRunner::use_autotune(const std::vector<AutotuneChoice>& choices) {
  std::vector<AutotuneDecision> lines;
  for (size_t k = 0; k < choices.size() && k < window_uses_extern_.size(); ++k) {
    const AutotuneChoice& c = choices[k];
    if (!c.measured) continue;
    window_uses_extern_[k] = c.use_libtorch;
    const WindowKernel& n = program_.program.window_kernels[k];
    // A GEMM's prepared weight exists only where the GEMM is kept, for the method that won.
    if (has_prepared_linears(k)) {
      const int method = c.gemm_method;
      const auto& kept = prepared_linears_[k][0];
      if (c.use_libtorch || (kept && method >= 0 && static_cast<int>(kept->kind()) != method)) prepared_linears_[k] = {};
      gemm_method_[k] = method;
      if (!c.use_libtorch) prepare_linears(k);
    }
    // The planned side (the kernel; LibTorch for a GEMM, libtorch_planned) and how much faster
    // than it the other side was, against the margin it had to beat.
    const bool copy = libtorch_planned(n);
    const double planned_ns = static_cast<double>(copy ? c.libtorch_ns : c.kernel_ns);
    const double other_ns = static_cast<double>(copy ? c.kernel_ns : c.libtorch_ns);
    const double gain = planned_ns > 0 ? 1.0 - other_ns / planned_ns : 0.0;
    // Which GEMM method a kept GEMM runs (linear_gemm.h: oneDNN, MKL or BLAS; the activation in
    // oneDNN's post-op or the generated epilogue), and each method's time where several raced.
    const std::string name = !c.use_libtorch && prepared_linears_[k][0]
                                 ? fmt::format("{} ({})", n.name, prepared_linears_[k][0]->method())
                                 : n.name;
    std::string methods;
    for (const GemmMethodTime& t : c.gemm_times) {
      methods += fmt::format("{}{} {}", methods.empty() ? "; GEMM methods: " : ", ",
                             linear_gemm_method_name(static_cast<LinearGemmMethod>(t.method)), race_time_text({true, t.ns, t.noise, 0}));
    }
    lines.push_back({fmt::format("{}: {}, LibTorch {}: {} -> {} ({} {:.1f}% {} than the planned {}, margin {:.1f}%{})",
                                 name, race_time_text({true, c.kernel_ns, c.kernel_noise, 0}),
                                 graph_.ops[static_cast<size_t>(n.op)].name, race_time_text({true, c.libtorch_ns, c.libtorch_noise, 0}),
                                 c.use_libtorch ? "LibTorch" : "kernel", copy ? "kernel" : "LibTorch", std::abs(gain) * 100,
                                 gain >= 0 ? "faster" : "slower", copy ? "LibTorch" : "kernel", c.margin * 100, methods),
                     c.use_libtorch != copy});
  }
  // The steps of kernels left to LibTorch are profiled under their op's name from now on.
  for (size_t s = 0; profiler_ != nullptr && s < program_.program.steps.size() && s < step_keys_.size(); ++s) {
    const Step& step = program_.program.steps[s];
    if (step.kind == Step::Kind::Window) step_keys_[s] = window_step_key(static_cast<size_t>(step.index));
  }
  return lines;
}

std::string ProgramRunner::window_signature(const WindowKernel& k) const {
  auto shape = [&](int constant) {
    return constant < 0 ? std::string("-")
                        : fmt::format("{}", fmt::join(program_.constants[static_cast<size_t>(constant)].sizes(), "x"));
  };
  std::string out = fmt::format("{} {} {} | {} {} {} {} {} {} | {} {} {} {} {} {} {} {} | {} {} | {} {} {}", static_cast<int>(k.kind),
                                graph_.ops[static_cast<size_t>(k.op)].name,
                                k.epilogue_op < 0 ? "-" : graph_.ops[static_cast<size_t>(k.epilogue_op)].name, k.n, k.c, k.h,
                                k.w, k.oh, k.ow, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, shape(k.weight_slot),
                                shape(k.bias_slot), k.has_clamp, k.clamp_lo, k.clamp_hi);
  // The GEMM the prepared weights are for: a decision timed against one does not hold for the other.
  if (k.kind == WindowKernel::Kind::LinearGemm || (k.kind == WindowKernel::Kind::Attention && k.attention.heads > 0)) {
    out += onednn_layout_enabled() ? " | gemm onednn " + onednn_version() : std::string(" | gemm blas");
    if (MklPackedLinear::available()) out += " mkl";
    if (const std::string forced = forced_linear_gemm(); !forced.empty()) out += " forced " + forced;
    out += fmt::format(" {}", static_cast<int>(k.activation));
  }
  if (k.kind == WindowKernel::Kind::Gemm) {
    const WindowKernel::GemmOperands& g = k.gemm;
    out += fmt::format(" | gemm {} {} {} {} {} {} {} onednn {}", k.out_features, g.batch, g.b_is_weight, g.bias_slot >= 0, g.a_transposed,
                       g.b_transposed, onednn_gemm_available(), onednn_version());
  }
  if (k.kind == WindowKernel::Kind::Attention) {
    const WindowKernel::AttentionShape& a = k.attention;
    out += fmt::format(" | attention {} {} {} {} {} {} {} {} {} | {} | {}", a.t, a.s, a.d, a.dv, a.scale, a.divide, a.heads,
                       shape(a.proj_weight), shape(a.proj_bias), fmt::join(a.keep_lo, ","), fmt::join(a.keep_hi, ","));
  }
  return out;
}

std::string ProgramRunner::autotune_signature() const {
  std::string out;
  for (const WindowKernel& k : program_.program.window_kernels) out += k.name + " " + window_signature(k) + "\n";
  return out;
}

void ProgramRunner::build_chain(ChainFormat format) {
  for (size_t i = 0; i < program_.program.onednn_convs.size(); ++i) {
    const OnednnConv& c = program_.program.onednn_convs[i];
    std::optional<at::Tensor> bias;
    if (c.bias >= 0) bias = program_.constants[static_cast<size_t>(c.bias)];
    program_.onednn[i] = std::make_shared<OnednnConvolution>(c, program_.constants[static_cast<size_t>(c.weight)], bias, format);
  }
}

std::vector<AutotuneChoice> ProgramRunner::measure_chain_formats(const std::vector<c10::IValue>& example_inputs) {
  std::vector<AutotuneChoice> choices(kChainFormats);
  // The runs change nothing the user can see: inputs are copies (a graph may write its inputs in
  // place) and the random generator is restored.
  std::vector<c10::IValue> inputs;
  for (const auto& v : example_inputs) inputs.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  auto gen = at::detail::getDefaultCPUGenerator();
  at::Tensor rng = gen.get_state();
  // Every layout is built first, so that the race runs them in turns (autotune_race.h): timed one
  // after the other, a slow spell of the machine during one layout's runs made another win.
  std::vector<std::vector<std::shared_ptr<OnednnConvolution>>> chains(kChainFormats);
  for (int f = 0; f < kChainFormats; ++f) {
    try {
      build_chain(static_cast<ChainFormat>(f));
      chains[static_cast<size_t>(f)] = program_.onednn;
    } catch (const std::exception&) {
      // this oneDNN cannot build it: not a candidate
    }
  }
  std::vector<std::function<bool()>> candidates;
  for (int f = 0; f < kChainFormats; ++f) {
    candidates.push_back([&, f] {
      if (chains[static_cast<size_t>(f)].empty()) return false;
      program_.onednn = chains[static_cast<size_t>(f)];
      run(inputs, 0);
      return true;
    });
  }
  // A budget: a graph whose run takes over 0.25 s (a big model, a big batch) is timed by its one
  // untimed run per layout, and one over 1 s not past the first layout (oneDNN's choice stays).
  RaceOptions options;
  options.slow_ns = 250'000'000;
  options.too_slow_ns = 1'000'000'000;
  std::vector<RaceEntry> entries;
  measuring_ = true;
  try {
    race(candidates, options, &entries);
  } catch (...) {
    measuring_ = false;
    gen.set_state(rng);
    throw;
  }
  measuring_ = false;
  gen.set_state(rng);
  for (int f = 0; f < kChainFormats; ++f) {
    const RaceEntry& e = entries[static_cast<size_t>(f)];
    choices[static_cast<size_t>(f)] = {e.ran, e.best_ns, 0, false, e.noise, 0, 0};
  }
  return choices;
}

AutotuneDecision ProgramRunner::use_chain_format(const std::vector<AutotuneChoice>& choices, bool cached) {
  // The decision is taken from the times, measured now or read back, by the race's rule: oneDNN's
  // own choice (the first) stays unless another layout beats it by more than the noise.
  std::vector<RaceEntry> entries;
  for (int f = 0; f < kChainFormats && f < static_cast<int>(choices.size()); ++f) {
    const AutotuneChoice& c = choices[static_cast<size_t>(f)];
    entries.push_back({c.measured, c.kernel_ns, c.kernel_noise, 0});
  }
  const RaceDecision d = decide(entries, RaceOptions{}.floor);
  build_chain(static_cast<ChainFormat>(d.winner));
  std::vector<std::string> parts;
  for (int f = 0; f < static_cast<int>(entries.size()); ++f) {
    const RaceEntry& e = entries[static_cast<size_t>(f)];
    parts.push_back(e.ran ? fmt::format("{} {}", chain_format_name(static_cast<ChainFormat>(f)), race_time_text(e))
                          : fmt::format("{} not built", chain_format_name(static_cast<ChainFormat>(f))));
  }
  const std::string why = d.winner == 0 ? fmt::format("kept: no layout {:.1f}% faster", d.margin * 100)
                                        : fmt::format("{:.1f}% faster, margin {:.1f}%", d.gain * 100, d.margin * 100);
  return {fmt::format("chain layout (whole graph, in turns{}): {} -> {} ({})", cached ? ", read from the autotune cache" : "",
                      fmt::join(parts, ", "), chain_format_name(static_cast<ChainFormat>(d.winner)), why),
          d.winner != 0};
}

std::string ProgramRunner::chain_signature() const {
  std::string out;
  for (const OnednnConv& c : program_.program.onednn_convs) {
    out += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n", c.name, c.n, c.c, c.h,
                       c.w, c.oc, c.oh, c.ow, c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, c.dh, c.dw, c.groups,
                       static_cast<int>(c.input_layout), static_cast<int>(c.residual_layout),
                       static_cast<int>(c.output_layout), activation_name(c.activation), c.residual_in_place,
                       c.scale_slot >= 0, c.pooled_slot >= 0, c.input_channels_last, c.output_channels_last);
  }
  for (const ChainChannelOp& k : program_.program.channel_ops) {
    out += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n", k.name, fmt::join(k.input_channels, ","), k.n,
                       k.c, k.h, k.w, k.oh, k.ow, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, k.ceil_mode,
                       static_cast<int>(k.output_layout));
  }
  return out;
}

std::vector<c10::IValue> ProgramRunner::run(const std::vector<c10::IValue>& inputs, int64_t graph_id) {
  std::vector<c10::IValue> slots(static_cast<size_t>(graph_.num_slots));
  std::copy(inputs.begin(), inputs.end(), slots.begin());
  InputBindings bindings(inputs);
  const auto& steps = program_.program.steps;
  bool timed = profiler_ && profiler_->enabled() && !measuring_;
  // Values of oneDNN chains in the blocked layout, by slot (beside their dense form, if any).
  std::vector<BlockedValue> blocked(program_.program.onednn_convs.empty() ? 0 : slots.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    std::optional<CpuProfiler::Scope> scope;
    if (timed) scope.emplace(*profiler_, step_keys_[s], graph_id);
    switch (step.kind) {
      case Step::Kind::Extern: run_extern(step.index, slots, bindings); break;
      case Step::Kind::Kernel:
        if (!run_kernel(static_cast<size_t>(step.index), slots)) {
          ++layout_fallbacks_;
          for (int op : program_.program.kernels[static_cast<size_t>(step.index)].ops) run_extern(op, slots, bindings);
        }
        break;
      case Step::Kind::Window:
        if (window_uses_extern_[static_cast<size_t>(step.index)] || !run_window_kernel(static_cast<size_t>(step.index), slots)) {
          ++layout_fallbacks_;
          for (int op : covered_ops(program_.program.window_kernels[static_cast<size_t>(step.index)])) {
            run_extern(op, slots, bindings);
          }
        }
        break;
      case Step::Kind::Onednn:
        if (!run_onednn(static_cast<size_t>(step.index), slots, blocked)) {
          // An operand without the compiled shape: LibTorch runs the convolution and its post-ops,
          // and the readers take the dense value.
          ++layout_fallbacks_;
          for (int op : step_ops(program_.program.onednn_convs[static_cast<size_t>(step.index)])) {
            run_extern(op, slots, bindings);
          }
        }
        break;
      case Step::Kind::ChannelOp:
        if (!run_channel_op(static_cast<size_t>(step.index), slots, blocked)) {
          // A dense input without the compiled shape: LibTorch's op, read densely.
          ++layout_fallbacks_;
          run_extern(program_.program.channel_ops[static_cast<size_t>(step.index)].op, slots, bindings);
        }
        break;
    }
    for (int slot : release_after_[s]) {
      slots[static_cast<size_t>(slot)] = c10::IValue();
      if (!blocked.empty()) blocked[static_cast<size_t>(slot)] = BlockedValue();
    }
  }
  std::vector<c10::IValue> out;
  out.reserve(graph_.outputs.size());
  for (int slot : graph_.outputs) out.push_back(slots[static_cast<size_t>(slot)]);
  return out;
}

}  // namespace tcprof
