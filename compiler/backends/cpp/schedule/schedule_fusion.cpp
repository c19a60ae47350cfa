#include "compiler/backends/cpp/schedule/schedule_fusion.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <limits>
#include <set>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/log.h"

#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cpp/lower/index_space.h"
#include "compiler/backends/cpp/schedule/plan_attention.h"
#include "compiler/backends/cpp/schedule/plan_gemm.h"
#include "compiler/backends/cpp/schedule/plan_linear.h"
#include "compiler/backends/cpp/schedule/plan_onednn_layout.h"

namespace tcprof {
namespace {

struct OpenKernel {
  Kernel kernel;
  KernelBuilder kb{kernel};
  std::vector<int64_t> full;
  std::map<int, int> node_of_slot;
  std::map<int, int> input_of_slot;
  std::map<const void*, int> input_of_constant;
  std::set<int> per_row;
  std::set<int> ops;
  std::vector<OperandLayout> layouts;  // example layout per input, for inner-stride classes
  bool open = true;
};

OperandLayout layout_of(const at::Tensor& t) {
  return {t.sizes().vec(), t.strides().vec()};
}

std::string short_name(const std::string& op) {
  auto pos = op.find("::");
  std::string s = pos == std::string::npos ? op : op.substr(pos + 2);
  if (!s.empty() && s.back() == '_') s.pop_back();
  return s;
}

class Scheduler {
 public:
  Scheduler(const CapturedGraph& g, const LowerContext& ctx, const std::vector<OpLowering>& lowerings, ScheduleTarget target)
      : g_(g), ctx_(ctx), lowerings_(lowerings), cpu_(target == ScheduleTarget::Cpu) {
    readers_.resize(static_cast<size_t>(g.num_slots));
    for (size_t i = 0; i < g.ops.size(); ++i) {
      for (int s : slots_read(g.ops[i])) readers_[static_cast<size_t>(s)].push_back(static_cast<int>(i));
    }
    outputs_.insert(g.outputs.begin(), g.outputs.end());
    slot_kernel_.assign(static_cast<size_t>(g.num_slots), -1);
    if (cpu_) {
      layout_ = plan_onednn_layout(g, ctx, out_.constants);
      attention_ = plan_attention(g, ctx, out_.constants);
    } else {
      layout_ = no_layout_plan(g);
      attention_ = plan_scaled_dot_product_attention(g, ctx, out_.constants);
    }
  }

  ScheduledProgram run() {
    for (size_t i = 0; i < g_.ops.size(); ++i) process(static_cast<int>(i));
    for (size_t k = 0; k < open_.size(); ++k) {
      if (open_[k]->open) close(static_cast<int>(k));
    }
    out_.program.onednn_convs = std::move(layout_.convs);
    out_.program.channel_ops = std::move(layout_.channel_ops);
    out_.onednn = std::move(layout_.primitives);
    return std::move(out_);
  }

 private:
  const at::Tensor& example_tensor(int slot) const { return ctx_.slots[static_cast<size_t>(slot)].toTensor(); }
  bool slot_is_tensor(int slot) const { return ctx_.slots[static_cast<size_t>(slot)].isTensor(); }

  void process(int i) {
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    if (int c = layout_.step_of_op[static_cast<size_t>(i)]; c >= 0) {
      // A chain convolution's step computes its post-ops too: they emit nothing of their own.
      if (layout_.convs[static_cast<size_t>(c)].op == i) onednn_step(c);
      return;
    }
    if (int k = layout_.channel_op_of_op[static_cast<size_t>(i)]; k >= 0) {
      out_.program.steps.push_back({Step::Kind::ChannelOp, k});  // its inputs are chain steps' outputs
      return;
    }
    if (int a = attention_.kernel_of_op[static_cast<size_t>(i)]; a >= 0) {
      // The whole chain runs where its last op (the second matmul) was: its inputs are ready.
      const WindowKernel& k = attention_.kernels[static_cast<size_t>(a)];
      if ((k.fused_ops.empty() ? k.op : k.fused_ops.back()) == i) attention_step(a);
      return;
    }
    if (cpu_ && (try_window_kernel(i) || try_window_epilogue(i))) return;
    const OpLowering& l = lowerings_[static_cast<size_t>(i)];
    if (l.kind == OpLowering::Kind::None) {
      extern_step(i, l.reason);
      return;
    }
    const at::Tensor& out = example_tensor(op.outputs[0]);
    std::vector<int64_t> full = l.kind == OpLowering::Kind::Pointwise ? out.sizes().vec() : ctx_.arg(op, 0).toTensor().sizes().vec();
    std::vector<int> reads = slots_read(op);
    int cand = -1;
    std::vector<std::pair<int, std::string>> refused;  // producer kernel, why op i did not join it
    for (int s : reads) {
      int k = slot_kernel_[static_cast<size_t>(s)];
      if (k < 0) continue;
      std::string why = why_no_fuse(k, full, l, op);
      if (why.empty()) {
        cand = k;
        break;
      }
      refused.emplace_back(k, std::move(why));
    }
    if (cand < 0) {  // a sibling reading the same input over the same index space
      for (int s : reads) {
        for (size_t k = 0; k < open_.size() && cand < 0; ++k) {
          if (open_[k]->open && open_[k]->input_of_slot.count(s) && why_no_fuse(static_cast<int>(k), full, l, op).empty()) {
            cand = static_cast<int>(k);
          }
        }
      }
    }
    if (log_enabled(LogChannel::Fusion)) {
      for (const auto& [k, why] : refused) {
        if (k != cand) log(LogChannel::Fusion, "op {} ({}) does not join the kernel of {}: {}", i, op.name, describe_open(k), why);
      }
    }
    for (int s : reads) {
      int k = slot_kernel_[static_cast<size_t>(s)];
      if (k < 0 || k == cand) continue;
      // Another open kernel over the same index space that this op reads too joins this one
      // (batch norm's backward: x-hat and the masked gradient meet in one product), so that
      // neither writes the value out only for the other to read it back.
      if (cand >= 0 && mergeable(cand, k, l, op)) merge(cand, k);
      else close(k);
    }
    if (cand < 0) {
      cand = static_cast<int>(open_.size());
      open_.push_back(std::make_unique<OpenKernel>());
      open_.back()->full = full;
    }
    emit_into(cand, i, l);
  }

  // Op i, lowered as `l`, computed in open kernel `cand`.
  void emit_into(int cand, int i, const OpLowering& l) {
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    OpenKernel& K = *open_[static_cast<size_t>(cand)];
    if (l.kind != OpLowering::Kind::Pointwise) {
      K.kernel.kind = l.kind == OpLowering::Kind::Row ? KernelKind::Row : KernelKind::Column;
      K.kernel.row_dims = l.row_dims;
    }
    EmitCallbacks cb;
    cb.tensor_arg = [&](size_t a) { return tensor_arg(K, op.args[a]); };
    cb.constant_tensor = [&](const at::Tensor& t) { return constant_input(K, t); };
    int node = emit_op(op, ctx_, K.kb, cb);
    int slot = op.outputs[0];
    K.node_of_slot[slot] = node;
    if (l.per_row) K.per_row.insert(slot);
    K.ops.insert(i);
    K.kernel.ops.push_back(i);
    K.kernel.op_names.push_back(op.name);
    slot_kernel_[static_cast<size_t>(slot)] = cand;
  }

  // Whether open kernel `b` can join open kernel `a` that op `op` (lowered as `l`) joins: both
  // could take the op, a row kernel's rows stay the same, and the row still merges for every
  // operand of both.
  bool mergeable(int a, int b, const OpLowering& l, const GraphOp& op) const {
    const OpenKernel& A = *open_[static_cast<size_t>(a)];
    const OpenKernel& B = *open_[static_cast<size_t>(b)];
    if (!why_no_fuse(b, A.full, l, op).empty()) return false;
    // Row and column kernels both reduce: their kinds and row dims must agree.
    const bool a_reduces = A.kernel.kind != KernelKind::Pointwise, b_reduces = B.kernel.kind != KernelKind::Pointwise;
    if (a_reduces && b_reduces && (A.kernel.kind != B.kernel.kind || A.kernel.row_dims != B.kernel.row_dims)) return false;
    if (!a_reduces && !b_reduces && l.kind == OpLowering::Kind::Pointwise) return true;
    const int row_dims = l.kind != OpLowering::Kind::Pointwise ? l.row_dims : a_reduces ? A.kernel.row_dims : B.kernel.row_dims;
    std::vector<OperandLayout> layouts = A.layouts;
    layouts.insert(layouts.end(), B.layouts.begin(), B.layouts.end());
    IndexSpace space;
    return canonicalize(A.full, row_dims, layouts, static_cast<int>(A.full.size()) - row_dims + 1, &space);
  }

  // Open kernel `b`'s ops computed in open kernel `a` instead, in their order; `b` is left empty.
  void merge(int a, int b) {
    OpenKernel& B = *open_[static_cast<size_t>(b)];
    if (log_enabled(LogChannel::Fusion)) log(LogChannel::Fusion, "kernel {} joins kernel {}", describe_open(b), describe_open(a));
    std::vector<int> ops = B.kernel.ops;
    B.open = false;
    B.node_of_slot.clear();
    for (int i : ops) emit_into(a, i, lowerings_[static_cast<size_t>(i)]);
  }

  // Why op `op` cannot join open kernel k (Inductor's WhyNoFuse); empty when it can. Read by the
  // scheduler's decisions and shown under TCPROF_LOGS=fusion.
  std::string why_no_fuse(int k, const std::vector<int64_t>& full, const OpLowering& l, const GraphOp& op) const {
    const OpenKernel& K = *open_[static_cast<size_t>(k)];
    if (!K.open) return "the kernel is closed (a value of it was already read outside it)";
    if (K.full != full) return fmt::format("different index space: [{}] vs the kernel's [{}]", fmt::join(full, ","), fmt::join(K.full, ","));
    const bool column = l.kind == OpLowering::Kind::Column, kernel_column = K.kernel.kind == KernelKind::Column;
    if ((column && K.kernel.kind == KernelKind::Row) || (kernel_column && l.kind == OpLowering::Kind::Row)) {
      return "a sum over the leading dims and a reduction over the trailing ones do not share a loop";
    }
    if (l.kind == OpLowering::Kind::Row && K.kernel.kind == KernelKind::Row && K.kernel.row_dims != l.row_dims) {
      return fmt::format("reduces over its last {} dims, the kernel over its last {}", l.row_dims, K.kernel.row_dims);
    }
    if (column && kernel_column && K.kernel.row_dims != l.row_dims) {
      return fmt::format("keeps its last {} dims, the kernel its last {}", l.row_dims, K.kernel.row_dims);
    }
    // Per-row values broadcast along the row only with their reduced dims kept.
    for (int s : slots_read(op)) {
      if (!K.per_row.count(s)) continue;
      // A column sum is complete only after the whole loop: nothing in it can read one.
      if (kernel_column) return fmt::format("reads column sum %{} of the kernel", s);
      if (l.kind == OpLowering::Kind::Row) return fmt::format("reduces again over per-row value %{} of the kernel", s);
      if (example_tensor(s).dim() != static_cast<int64_t>(full.size())) {
        return fmt::format("reads per-row value %{} without its reduced dims kept (it would need a reshape)", s);
      }
    }
    return {};
  }

  // The memory order eager wrote every output of the kernel in, when that is not the logical order
  // and is the same for all of them (dense, no per-row outputs, a row kernel's row dims last).
  std::vector<int> eager_output_order(const OpenKernel& K, const Kernel& kernel) const {
    std::vector<int> order;
    const int rank = static_cast<int>(K.full.size());
    for (const auto& o : kernel.outputs) {
      if (o.per_row || !slot_is_tensor(o.slot)) return {};
      const at::Tensor& t = example_tensor(o.slot);
      if (t.dim() != rank || t.is_contiguous() || !t.is_non_overlapping_and_dense()) return {};
      for (int d = 1; d < rank; ++d) {
        if (t.size(d) == 1) return {};  // its stride says nothing about the order
      }
      std::vector<int> mine(static_cast<size_t>(rank));
      for (int d = 0; d < rank; ++d) mine[static_cast<size_t>(d)] = d;
      std::stable_sort(mine.begin(), mine.end(), [&](int a, int b) { return t.stride(a) > t.stride(b); });
      if (!order.empty() && order != mine) return {};
      order = mine;
    }
    const int row_dims = kernel.kind != KernelKind::Pointwise ? kernel.row_dims : 0;
    for (int d = rank - row_dims; d < rank; ++d) {
      if (order[static_cast<size_t>(d)] != d) return {};
    }
    return order;
  }

  std::string describe_open(int k) const {
    const Kernel& kernel = open_[static_cast<size_t>(k)]->kernel;
    std::vector<std::string> names;
    for (const auto& n : kernel.op_names) names.push_back(short_name(n));
    return fmt::format("[{}]", fmt::join(names, ", "));
  }

  int tensor_arg(OpenKernel& K, const Arg& a) {
    if (a.kind == Arg::Kind::Slot) {
      auto it = K.node_of_slot.find(a.slot);
      if (it != K.node_of_slot.end()) return it->second;
      auto in = K.input_of_slot.find(a.slot);
      if (in == K.input_of_slot.end()) {
        in = K.input_of_slot.emplace(a.slot, add_input(K, example_tensor(a.slot), a.slot, -1)).first;
      }
      return K.kb.load(in->second, K.kernel.inputs[static_cast<size_t>(in->second)].type);
    }
    return constant_input(K, evaluate_arg(a, ctx_.slots, ctx_.bindings).toTensor());
  }

  int constant_input(OpenKernel& K, const at::Tensor& t) {
    const void* key = t.unsafeGetTensorImpl();
    auto it = K.input_of_constant.find(key);
    if (it == K.input_of_constant.end()) {
      int c = static_cast<int>(out_.constants.size());
      out_.constants.push_back(t);
      it = K.input_of_constant.emplace(key, add_input(K, t, -1, c)).first;
    }
    return K.kb.load(it->second, K.kernel.inputs[static_cast<size_t>(it->second)].type);
  }

  int add_input(OpenKernel& K, const at::Tensor& t, int slot, int constant) {
    KernelInput in;
    in.slot = slot;
    in.constant = constant;
    to_elem_type(t.scalar_type(), &in.type);
    K.kernel.inputs.push_back(in);
    K.layouts.push_back(layout_of(t));
    return static_cast<int>(K.kernel.inputs.size()) - 1;
  }

  // Closes the open kernels that compute `slots` (op i's inputs): op i runs outside generated code,
  // for `why` (the fusion log's words).
  void close_producers(int i, const std::vector<int>& slots, const std::string& why) {
    for (int s : slots) {
      const int k = s >= 0 ? slot_kernel_[static_cast<size_t>(s)] : -1;
      if (k < 0) continue;
      if (log_enabled(LogChannel::Fusion)) {
        log(LogChannel::Fusion, "op {} ({}) does not join the kernel of {}: it runs outside generated code ({})", i,
            g_.ops[static_cast<size_t>(i)].name, describe_open(k), why);
      }
      close(k);
    }
  }

  void extern_step(int i, const std::string& reason) {
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    close_producers(i, slots_read(op), reason.empty() ? "extern by design" : reason);
    // An op that mutates something may write what an open kernel will read later.
    if (!is_pure_op(op.name)) {
      for (size_t k = 0; k < open_.size(); ++k) {
        if (open_[k]->open) close(static_cast<int>(k));
      }
    }
    out_.program.steps.push_back({Step::Kind::Extern, i});
    if (!is_extern_by_design(op.name) && op.name.rfind("prim::", 0) != 0) out_.fallbacks.push_back({i, reason});
  }

  void onednn_step(int c) {
    const OnednnConv& conv = layout_.convs[static_cast<size_t>(c)];
    for (int s : {conv.input_slot, conv.residual_slot, conv.scale_slot}) {
      if (s >= 0 && slot_kernel_[static_cast<size_t>(s)] >= 0) close(slot_kernel_[static_cast<size_t>(s)]);
    }
    out_.program.steps.push_back({Step::Kind::Onednn, c});
  }

  void attention_step(int a) {
    WindowKernel k = attention_.kernels[static_cast<size_t>(a)];
    for (int s : {k.input_slot, k.attention.kt_slot, k.attention.v_slot}) {
      if (s >= 0 && slot_kernel_[static_cast<size_t>(s)] >= 0) close(slot_kernel_[static_cast<size_t>(s)]);
    }
    k.name = k.kind == WindowKernel::Kind::ScaledDotProductAttention
                 ? fmt::format("n{}_sdpa{}", out_.program.window_kernels.size(), k.attention.causal ? "_causal" : "")
                 : fmt::format("n{}_{}attention", out_.program.window_kernels.size(), k.attention.heads > 0 ? "multi_head_" : "");
    out_.program.window_kernels.push_back(std::move(k));
    out_.program.steps.push_back({Step::Kind::Window, static_cast<int>(out_.program.window_kernels.size()) - 1});
  }

  void close(int k) {
    OpenKernel& K = *open_[static_cast<size_t>(k)];
    K.open = false;
    Kernel& kernel = K.kernel;
    for (const auto& [slot, node] : K.node_of_slot) {
      slot_kernel_[static_cast<size_t>(slot)] = -1;
      bool needed = outputs_.count(slot) > 0;
      for (int r : readers_[static_cast<size_t>(slot)]) needed = needed || K.ops.count(r) == 0;
      if (!needed) continue;
      KernelOutput o;
      o.slot = slot;
      o.expr = node;
      o.per_row = K.per_row.count(slot) > 0;
      o.keepdim = o.per_row && example_tensor(slot).dim() == static_cast<int64_t>(K.full.size());
      kernel.outputs.push_back(o);
    }
    int row_dims = kernel.kind != KernelKind::Pointwise ? kernel.row_dims : 0;
    kernel.rank = row_dims > 0 ? static_cast<int>(K.full.size()) - row_dims + 1 : std::max<int>(1, static_cast<int>(K.full.size()));
    IndexSpace space;
    if (kernel.outputs.empty()) return;  // nothing reads it (all its values were dead)
    kernel.order = eager_output_order(K, kernel);
    std::vector<int64_t> full = K.full;
    if (!kernel.order.empty()) permute_index_space(kernel.order, full, K.layouts);
    if (!canonicalize(full, row_dims, K.layouts, kernel.rank, &space)) {
      // The row does not merge for these layouts: run the ops through LibTorch instead.
      for (int op : kernel.ops) out_.program.steps.push_back({Step::Kind::Extern, op});
      return;
    }
    int64_t inner = space.sizes.back();
    for (size_t in = 0; in < kernel.inputs.size(); ++in) {
      kernel.inputs[in].inner = inner <= 1 ? InnerStride::Strided : inner_class(space.strides[in].back());
    }
    int index = static_cast<int>(out_.program.kernels.size());
    std::string names;
    for (size_t n = 0; n < kernel.op_names.size() && n < 4; ++n) names += "_" + short_name(kernel.op_names[n]);
    kernel.name = fmt::format("k{}{}", index, names);
    out_.program.kernels.push_back(kernel);
    out_.program.steps.push_back({Step::Kind::Kernel, index});
  }

  // relu / relu6 / hardtanh right after a generated convolution clamp inside it (MobileNet's
  // conv + ReLU6): one pass over the output instead of two.
  bool try_window_epilogue(int i) {
    if (try_gemm_activation(i)) return true;
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    bool relu = op.name == "aten::relu", relu6 = op.name == "aten::relu6", hardtanh = op.name == "aten::hardtanh";
    if ((!relu && !relu6 && !hardtanh) || op.args.empty() || op.args[0].kind != Arg::Kind::Slot) return false;
    int slot = op.args[0].slot;
    auto it = window_of_slot_.find(slot);
    if (it == window_of_slot_.end() || readers_[static_cast<size_t>(slot)].size() != 1 || outputs_.count(slot)) return false;
    WindowKernel& k = out_.program.window_kernels[static_cast<size_t>(it->second)];
    if (k.kind != WindowKernel::Kind::DepthwiseConv2d || k.has_clamp) return false;
    double lo = 0, hi = std::numeric_limits<float>::infinity();
    if (relu6) hi = 6;
    if (hardtanh) {
      for (size_t a = 1; a < op.args.size(); ++a) {
        if (op.args[a].kind != Arg::Kind::Constant) return false;
      }
      lo = op.args.size() > 1 ? ctx_.arg(op, 1).toScalar().toDouble() : -1.0;
      hi = op.args.size() > 2 ? ctx_.arg(op, 2).toScalar().toDouble() : 1.0;
    }
    k.has_clamp = true;
    k.clamp_lo = static_cast<float>(lo);
    k.clamp_hi = static_cast<float>(hi);
    k.output_slot = op.outputs[0];
    k.epilogue_op = i;
    window_of_slot_.erase(it);
    return true;
  }

  // gelu right after a linear's GEMM runs in the GEMM's output pass (oneDNN's eltwise post-op), while
  // the tile is in registers: ConvNeXt-T's GELUs took 9.6 ms a call as kernels of their own. (Not
  // relu: oneDNN's makes NaN 0 where eager's keeps it.)
  bool try_gemm_activation(int i) {
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    if (op.name != "aten::gelu" || op.args.empty() || op.args[0].kind != Arg::Kind::Slot || op.outputs.size() != 1) return false;
    if (op.args.size() > 2 || (op.args.size() == 2 && (op.args[1].kind != Arg::Kind::Constant || !op.args[1].constant.isString()))) {
      return false;
    }
    const std::string approximate = op.args.size() == 2 ? op.args[1].constant.toStringRef() : "none";
    if (approximate != "none" && approximate != "tanh") return false;
    const auto activation = approximate == "none" ? WindowKernel::Activation::Gelu : WindowKernel::Activation::GeluTanh;
    const int slot = op.args[0].slot;
    auto it = window_of_slot_.find(slot);
    if (it == window_of_slot_.end() || readers_[static_cast<size_t>(slot)].size() != 1 || outputs_.count(slot)) return false;
    WindowKernel& k = out_.program.window_kernels[static_cast<size_t>(it->second)];
    if (k.kind != WindowKernel::Kind::LinearGemm) return false;
    k.activation = activation;
    // A generated bias + activation pass, for the GEMMs that cannot apply it (MKL's, BLAS's) and as
    // oneDNN's alternative to its own post-op: the autotune phase races the two (run/linear_gemm.h).
    k.epilogue_kernel = true;
    k.output_slot = op.outputs[0];
    k.epilogue_op = i;
    k.name += "_gelu";
    window_of_slot_.erase(it);
    return true;
  }

  // A linear with constant weights as a direct BLAS call (schedule/plan_linear.h).
  bool try_linear(int i) {
    std::optional<WindowKernel> k = plan_linear(g_, i, ctx_, out_.constants);
    if (!k) return false;
    int s = k->input_slot;
    if (slot_kernel_[static_cast<size_t>(s)] >= 0) close(slot_kernel_[static_cast<size_t>(s)]);
    k->name = fmt::format("n{}_{}", out_.program.window_kernels.size(),
                          k->kind == WindowKernel::Kind::LinearGemv ? "linear_gemv" : "linear_gemm");
    if (k->kind == WindowKernel::Kind::LinearGemm) {
      window_of_slot_[k->output_slot] = static_cast<int>(out_.program.window_kernels.size());
    }
    out_.program.window_kernels.push_back(std::move(*k));
    out_.program.steps.push_back({Step::Kind::Window, static_cast<int>(out_.program.window_kernels.size()) - 1});
    return true;
  }

  // A product of two values of the graph as a oneDNN matmul call (schedule/plan_gemm.h).
  bool try_gemm(int i) {
    std::optional<WindowKernel> k = plan_gemm(g_, i, ctx_);
    if (!k) return false;
    close_producers(i, {k->input_slot, k->gemm.b_slot, k->gemm.bias_slot}, "a GEMM: oneDNN's matmul or LibTorch's, raced");
    k->name = fmt::format("n{}_{}_onednn", out_.program.window_kernels.size(), short_name(g_.ops[static_cast<size_t>(i)].name));
    out_.program.window_kernels.push_back(std::move(*k));
    out_.program.steps.push_back({Step::Kind::Window, static_cast<int>(out_.program.window_kernels.size()) - 1});
    return true;
  }

  bool try_window_kernel(int i) {
    if (try_linear(i) || try_gemm(i)) return true;
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    bool conv = op.name == "aten::conv2d", pool = op.name == "aten::max_pool2d";
    if (!conv && !pool) return false;
    if (op.args.empty() || op.args[0].kind != Arg::Kind::Slot || op.outputs.size() != 1) return false;
    for (const auto& a : op.args) {
      if (a.kind == Arg::Kind::Sym) return false;
    }
    const at::Tensor& x = example_tensor(op.args[0].slot);
    if (!slot_is_tensor(op.outputs[0])) return false;
    const at::Tensor& y = example_tensor(op.outputs[0]);
    if (x.scalar_type() != at::kFloat || x.dim() != 4 || y.dim() != 4 || !x.is_contiguous() || x.requires_grad()) return false;
    WindowKernel k;
    k.op = i;
    k.input_slot = op.args[0].slot;
    k.output_slot = op.outputs[0];
    k.n = x.size(0), k.c = x.size(1), k.h = x.size(2), k.w = x.size(3), k.oh = y.size(2), k.ow = y.size(3);
    auto pair = [&](size_t a, int64_t dflt, int64_t* p, int64_t* q) {
      c10::IValue v = ctx_.arg(op, a);
      if (!v.isIntList()) return false;
      auto l = v.toIntVector();
      if (l.empty()) l = {dflt, dflt};
      if (l.size() == 1) l.push_back(l[0]);
      if (l.size() != 2) return false;
      *p = l[0], *q = l[1];
      return true;
    };
    if (conv) {
      if (op.args.size() < 7 || op.args[1].kind != Arg::Kind::Constant || !op.args[1].constant.isTensor()) return false;
      at::Tensor w = op.args[1].constant.toTensor();
      c10::IValue b = ctx_.arg(op, 2);
      if (w.dim() != 4 || w.scalar_type() != at::kFloat) return false;
      if (!b.isNone() && (!b.isTensor() || b.toTensor().scalar_type() != at::kFloat)) return false;
      k.kh = w.size(2), k.kw = w.size(3);
      if (!pair(3, 1, &k.sh, &k.sw) || !pair(4, 0, &k.ph, &k.pw) || !pair(5, 1, &k.dh, &k.dw)) return false;
      for (const auto& a : op.args) {
        if (a.kind == Arg::Kind::Slot && a.slot != k.input_slot) return false;
      }
      int64_t groups = ctx_.arg(op, 6).toInt();
      bool depthwise = groups == k.c && w.size(0) == k.c && w.size(1) == 1 && y.size(1) == k.c;
      bool pointwise = groups == 1 && k.kh == 1 && k.kw == 1 && k.sh == 1 && k.sw == 1 && k.ph == 0 && k.pw == 0 &&
                       w.size(1) == k.c;
      bool prepacked = !depthwise && !pointwise && groups == 1 && k.c >= 64 && at::hasMKLDNN();
      if (!depthwise && !pointwise && !prepacked) return false;
      k.kind = depthwise ? WindowKernel::Kind::DepthwiseConv2d
               : pointwise ? WindowKernel::Kind::Conv1x1Gemm
                           : WindowKernel::Kind::MkldnnConv;
      k.weight_slot = static_cast<int>(out_.constants.size());
      if (prepacked) {
        try {
          out_.constants.push_back(at::mkldnn_reorder_conv2d_weight(w.contiguous().to_mkldnn(), {k.ph, k.pw}, {k.sh, k.sw},
                                                                    {k.dh, k.dw}, 1));
        } catch (const std::exception&) {
          return false;  // this oneDNN cannot take it: eager's convolution stays
        }
      } else {
        out_.constants.push_back(w.contiguous());
      }
      if (b.isTensor()) {
        k.bias_slot = static_cast<int>(out_.constants.size());
        out_.constants.push_back(b.toTensor().contiguous());
      }
    } else {
      if (op.args.size() < 6) return false;
      if (!pair(1, 1, &k.kh, &k.kw) || !pair(2, 0, &k.sh, &k.sw) || !pair(3, 0, &k.ph, &k.pw) || !pair(4, 1, &k.dh, &k.dw)) return false;
      if (ctx_.arg(op, 2).toIntVector().empty()) k.sh = k.kh, k.sw = k.kw;
      k.kind = WindowKernel::Kind::MaxPool2d;
    }
    int s = op.args[0].slot;
    if (slot_kernel_[static_cast<size_t>(s)] >= 0) close(slot_kernel_[static_cast<size_t>(s)]);
    const char* what = !conv ? "max_pool2d"
                       : k.kind == WindowKernel::Kind::Conv1x1Gemm ? "conv1x1_gemm"
                       : k.kind == WindowKernel::Kind::MkldnnConv ? "conv2d_prepacked"
                                                                     : "depthwise_conv2d";
    k.name = fmt::format("n{}_{}", out_.program.window_kernels.size(), what);
    window_of_slot_[k.output_slot] = static_cast<int>(out_.program.window_kernels.size());
    out_.program.window_kernels.push_back(k);
    out_.program.steps.push_back({Step::Kind::Window, static_cast<int>(out_.program.window_kernels.size()) - 1});
    return true;
  }

  const CapturedGraph& g_;
  const LowerContext& ctx_;
  const std::vector<OpLowering>& lowerings_;
  const bool cpu_;
  ScheduledProgram out_;
  std::vector<std::unique_ptr<OpenKernel>> open_;
  std::vector<int> slot_kernel_;
  std::vector<std::vector<int>> readers_;
  std::set<int> outputs_;
  std::map<int, int> window_of_slot_;  // output slot -> native kernel, while it may take an epilogue
  OnednnLayoutPlan layout_;
  AttentionPlan attention_;
};

}  // namespace

std::vector<OpLowering> lower_graph_ops(const CapturedGraph& graph, const LowerContext& ctx) {
  std::vector<OpLowering> out;
  out.reserve(graph.ops.size());
  for (const auto& op : graph.ops) {
    if (!op.name.empty() && op.name.back() == '_') {
      OpLowering l;
      l.reason = "in-place op on a value that is read afterwards (or a view, input or parameter)";
      out.push_back(l);
    } else {
      out.push_back(classify_op(op, ctx));
    }
  }
  return out;
}

ScheduledProgram schedule_graph(const CapturedGraph& graph, const LowerContext& ctx,
                                const std::vector<OpLowering>& lowerings, ScheduleTarget target) {
  return Scheduler(graph, ctx, lowerings, target).run();
}

}  // namespace tcprof
