#include "compiler/backends/cpp/schedule/plan_attention.h"

#include <cmath>
#include <set>

#include <ATen/ATen.h>

#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/torch_compat.h"

namespace tcprof {
namespace {

// A float32 CPU tensor of rank 2 to 4: [rows, cols], [H, rows, cols] or [B, H, rows, cols]; for
// SDPA, a floating tensor of those ranks on any device.
bool attention_operand(const c10::IValue& v, bool sdpa) {
  if (!v.isTensor()) return false;
  const at::Tensor& t = v.toTensor();
  const bool type = sdpa ? (t.scalar_type() == at::kFloat || t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16)
                         : (t.device().is_cpu() && t.scalar_type() == at::kFloat);
  return t.defined() && type && !t.is_sparse() && t.dim() >= 2 && t.dim() <= 4;
}

// A number, or a 0-dim tensor holding one (a Python float becomes either).
bool scalar_constant(const Arg& a, double* out) {
  if (a.kind != Arg::Kind::Constant) return false;
  const c10::IValue& v = a.constant;
  if (v.isDouble() || v.isInt()) {
    *out = v.isDouble() ? v.toDouble() : static_cast<double>(v.toInt());
    return true;
  }
  if (v.isTensor() && v.toTensor().dim() == 0 && v.toTensor().is_floating_point()) {
    *out = v.toTensor().item<double>();
    return true;
  }
  return false;
}

class AttentionMatcher {
 public:
  AttentionMatcher(const CapturedGraph& g, const LowerContext& ctx, std::vector<at::Tensor>& constants, bool sdpa)
      : g_(g), ctx_(ctx), constants_(constants), sdpa_(sdpa) {
    readers_.resize(static_cast<size_t>(g.num_slots));
    for (size_t i = 0; i < g.ops.size(); ++i) {
      for (int s : slots_read(g.ops[i])) readers_[static_cast<size_t>(s)].push_back(static_cast<int>(i));
    }
    outputs_.insert(g.outputs.begin(), g.outputs.end());
    plan_.kernel_of_op.assign(g.ops.size(), -1);
  }

  AttentionPlan run() {
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (plan_.kernel_of_op[i] < 0 && (sdpa_ || !try_native_mha(static_cast<int>(i)))) try_match(static_cast<int>(i));
    }
    return std::move(plan_);
  }

 private:
  const c10::IValue& value(int slot) const { return ctx_.slots[static_cast<size_t>(slot)]; }

  // The one op that reads `op`'s only output, when that output is not a graph output either.
  int sole_reader(int op) const {
    const GraphOp& o = g_.ops[static_cast<size_t>(op)];
    if (o.outputs.size() != 1) return -1;
    int slot = o.outputs[0];
    const auto& r = readers_[static_cast<size_t>(slot)];
    if (r.size() != 1 || outputs_.count(slot)) return -1;
    const GraphOp& next = g_.ops[static_cast<size_t>(r[0])];
    if (next.args.empty() || next.args[0].kind != Arg::Kind::Slot || next.args[0].slot != slot) return -1;
    return r[0];
  }

  bool two_slot_matmul(const GraphOp& op) const {
    return op.name == "aten::matmul" && op.args.size() == 2 && op.outputs.size() == 1 &&
           op.args[0].kind == Arg::Kind::Slot && op.args[1].kind == Arg::Kind::Slot;
  }

  // Row i keeps the keys where the mask (broadcast to [T, S]) is false, as one range [lo, hi).
  bool mask_ranges(const at::Tensor& mask, WindowKernel::AttentionShape& a) const {
    if (mask.scalar_type() != at::kBool || mask.dim() < 1 || mask.dim() > 4) return false;
    for (int64_t d = 0; d + 2 < mask.dim(); ++d) {
      if (mask.size(d) != 1) return false;  // one mask for every batch and head
    }
    int64_t mr = mask.dim() >= 2 ? mask.size(-2) : 1, mc = mask.size(-1);
    if ((mr != 1 && mr != a.t) || (mc != 1 && mc != a.s)) return false;
    at::Tensor m = mask.reshape({mr, mc}).expand({a.t, a.s}).to(at::kCPU).contiguous();  // read here, wherever it lives
    const bool* p = m.data_ptr<bool>();
    a.keep_lo.assign(static_cast<size_t>(a.t), 0);
    a.keep_hi.assign(static_cast<size_t>(a.t), 0);
    for (int64_t i = 0; i < a.t; ++i) {
      const bool* row = p + i * a.s;
      int64_t lo = 0;
      while (lo < a.s && row[lo]) ++lo;
      int64_t hi = lo;
      while (hi < a.s && !row[hi]) ++hi;
      for (int64_t j = hi; j < a.s; ++j) {
        if (!row[j]) return false;  // a second kept range: not this kernel's shape
      }
      if (lo == hi) lo = hi = 0;
      a.keep_lo[static_cast<size_t>(i)] = static_cast<int32_t>(lo);
      a.keep_hi[static_cast<size_t>(i)] = static_cast<int32_t>(hi);
    }
    return true;
  }

  int constant(const at::Tensor& t) {
    constants_.push_back(t.contiguous());
    return static_cast<int>(constants_.size()) - 1;
  }

  // _native_multi_head_attention(x, x, x, E, H, Wqkv, bqkv, Wproj, bproj, None, False, ...):
  // self-attention, no mask, no weights asked for, constant float weights.
  bool try_native_mha(int i) {
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    if (op.name != "aten::_native_multi_head_attention" || op.args.size() < 11 || op.outputs.size() != 2) return false;
    for (size_t a = 0; a < 3; ++a) {
      if (op.args[a].kind != Arg::Kind::Slot || op.args[a].slot != op.args[0].slot) return false;
    }
    for (size_t a = 3; a < op.args.size(); ++a) {
      if (op.args[a].kind != Arg::Kind::Constant) return false;
    }
    const c10::IValue& x = value(op.args[0].slot);
    if (!x.isTensor() || x.toTensor().dim() != 3 || x.toTensor().scalar_type() != at::kFloat || !x.toTensor().device().is_cpu()) {
      return false;
    }
    const c10::IValue &e = op.args[3].constant, &h = op.args[4].constant, &mask = op.args[9].constant,
                      &need_weights = op.args[10].constant;
    if (!e.isInt() || !h.isInt() || !mask.isNone() || !need_weights.isBool() || need_weights.toBool()) return false;
    const int64_t embed = e.toInt(), heads = h.toInt();
    if (heads <= 0 || embed % heads != 0 || x.toTensor().size(2) != embed) return false;
    std::vector<at::Tensor> w;
    for (size_t a = 5; a < 9; ++a) {
      const c10::IValue& t = op.args[a].constant;
      if (!t.isTensor() || t.toTensor().scalar_type() != at::kFloat || !t.toTensor().device().is_cpu()) return false;
      w.push_back(t.toTensor());
    }
    if (w[0].sizes() != at::IntArrayRef{3 * embed, embed} || w[1].sizes() != at::IntArrayRef{3 * embed} ||
        w[2].sizes() != at::IntArrayRef{embed, embed} || w[3].sizes() != at::IntArrayRef{embed}) {
      return false;
    }
    WindowKernel k;
    k.kind = WindowKernel::Kind::Attention;
    WindowKernel::AttentionShape& a = k.attention;
    a.t = a.s = x.toTensor().size(1);
    a.d = a.dv = embed / heads;
    if (a.t == 0 || (a.d * (a.s + 16) + a.s * (a.dv + 16)) > (int64_t{4} << 20)) return false;
    a.scale = 1.0 / std::sqrt(static_cast<double>(a.d));  // LibTorch scales q by it before q kT
    a.heads = static_cast<int>(heads);
    k.op = i;
    k.input_slot = op.args[0].slot;
    k.output_slot = op.outputs[0];
    k.n = x.toTensor().size(0) * a.t;  // the projections' rows, as compiled
    k.weight_slot = constant(w[0]);  // both projections: GEMMs against weights the runner prepares
    k.bias_slot = constant(w[1]);
    a.proj_weight = constant(w[2]);
    a.proj_bias = constant(w[3]);
    plan_.kernel_of_op[static_cast<size_t>(i)] = static_cast<int>(plan_.kernels.size());
    plan_.kernels.push_back(std::move(k));
    return true;
  }

  void try_match(int first) {
    const GraphOp& mm1 = g_.ops[static_cast<size_t>(first)];
    if (!two_slot_matmul(mm1)) return;
    WindowKernel k;
    k.kind = WindowKernel::Kind::Attention;
    WindowKernel::AttentionShape& a = k.attention;
    int q = mm1.args[0].slot, kt = mm1.args[1].slot;
    if (!attention_operand(value(q), sdpa_) || !attention_operand(value(kt), sdpa_)) return;
    const at::Tensor &qt = value(q).toTensor(), &ktt = value(kt).toTensor();
    if (qt.dim() != ktt.dim() || qt.sizes().slice(0, qt.dim() - 2) != ktt.sizes().slice(0, ktt.dim() - 2)) return;
    a.t = qt.size(-2), a.d = qt.size(-1), a.s = ktt.size(-1);
    if (ktt.size(-2) != a.d || a.t == 0 || a.s == 0 || a.d == 0) return;
    int op = sole_reader(first);
    if (op < 0) return;
    std::vector<int> fused;
    const GraphOp* cur = &g_.ops[static_cast<size_t>(op)];
    if ((cur->name == "aten::mul" || cur->name == "aten::div") && cur->args.size() == 2) {
      if (!scalar_constant(cur->args[1], &a.scale) || !std::isfinite(a.scale)) return;
      a.divide = cur->name == "aten::div";
      fused.push_back(op);
      if ((op = sole_reader(op)) < 0) return;
      cur = &g_.ops[static_cast<size_t>(op)];
    }
    if (cur->name == "aten::masked_fill") {
      double fill = 0;
      if (cur->args.size() != 3 || cur->args[1].kind != Arg::Kind::Constant || !cur->args[1].constant.isTensor() ||
          !scalar_constant(cur->args[2], &fill) || !(std::isinf(fill) && fill < 0) ||
          !mask_ranges(cur->args[1].constant.toTensor(), a)) {
        return;
      }
      fused.push_back(op);
      if ((op = sole_reader(op)) < 0) return;
      cur = &g_.ops[static_cast<size_t>(op)];
    }
    if (cur->name != "aten::softmax" || cur->args.size() < 2) return;
    c10::IValue dim = ctx_.arg(*cur, 1);
    if (!dim.isInt() || (dim.toInt() != -1 && dim.toInt() != qt.dim() - 1)) return;
    if (cur->args.size() > 2 && !ctx_.arg(*cur, 2).isNone()) return;
    fused.push_back(op);
    if ((op = sole_reader(op)) < 0) return;
    const GraphOp& mm2 = g_.ops[static_cast<size_t>(op)];
    if (!two_slot_matmul(mm2)) return;
    int v = mm2.args[1].slot;
    if (!attention_operand(value(v), sdpa_) || !attention_operand(value(mm2.outputs[0]), sdpa_)) return;
    const at::Tensor& vt = value(v).toTensor();
    if (vt.dim() != qt.dim() || vt.sizes().slice(0, vt.dim() - 2) != qt.sizes().slice(0, qt.dim() - 2) ||
        vt.size(-2) != a.s || vt.size(-1) == 0) {
      return;
    }
    a.dv = vt.size(-1);
    // The kernel keeps kT and v of one head in a per-thread buffer: up to 16 MB of them.
    if (!sdpa_ && (a.d * (a.s + 16) + a.s * (a.dv + 16)) > (int64_t{4} << 20)) return;
    fused.push_back(op);
    // Every intermediate has q's type (softmax over a float input), and nothing between the two
    // matmuls writes memory: q and kT are read where the second matmul was.
    for (int f : fused) {
      const c10::IValue& out = value(g_.ops[static_cast<size_t>(f)].outputs[0]);
      if (!out.isTensor() || out.toTensor().scalar_type() != qt.scalar_type()) return;
    }
    if (vt.scalar_type() != qt.scalar_type() || ktt.scalar_type() != qt.scalar_type()) return;
    if (sdpa_ && !plan_sdpa_mask(a, fused)) return;
    for (int i = first + 1; i < op; ++i) {
      if (!is_pure_op(g_.ops[static_cast<size_t>(i)].name)) return;
    }
    a.kt_slot = kt;
    a.v_slot = v;
    k.op = first;
    k.fused_ops = fused;
    k.input_slot = q;
    k.output_slot = mm2.outputs[0];
    int index = static_cast<int>(plan_.kernels.size());
    plan_.kernel_of_op[static_cast<size_t>(first)] = index;
    for (int f : fused) plan_.kernel_of_op[static_cast<size_t>(f)] = index;
    plan_.kernels.push_back(std::move(k));
  }

  // SDPA's mask: none, is_causal (row i keeps [0, i] of a square score matrix), or a constant
  // boolean mask of the kept keys. False when a row keeps nothing.
  bool plan_sdpa_mask(WindowKernel::AttentionShape& a, const std::vector<int>& fused) {
    if (a.keep_lo.empty()) return true;
    bool causal = a.t == a.s;
    for (int64_t i = 0; i < a.t; ++i) {
      const int32_t lo = a.keep_lo[static_cast<size_t>(i)], hi = a.keep_hi[static_cast<size_t>(i)];
      if (hi <= lo) return false;
      causal = causal && lo == 0 && hi == i + 1;
    }
    a.causal = causal;
    if (causal) return true;
    for (int f : fused) {
      const GraphOp& op = g_.ops[static_cast<size_t>(f)];
      if (op.name != "aten::masked_fill") continue;
      const at::Tensor& mask = op.args[1].constant.toTensor();
      at::Tensor m = mask.reshape({mask.dim() >= 2 ? mask.size(-2) : 1, mask.size(-1)}).expand({a.t, a.s});
      a.keep_mask = constant(m.logical_not());
    }
    return a.keep_mask >= 0;
  }

  const CapturedGraph& g_;
  const LowerContext& ctx_;
  std::vector<at::Tensor>& constants_;
  const bool sdpa_;
  std::vector<std::vector<int>> readers_;
  std::set<int> outputs_;
  AttentionPlan plan_;
};

}  // namespace

AttentionPlan plan_attention(const CapturedGraph& graph, const LowerContext& ctx, std::vector<at::Tensor>& constants) {
  return AttentionMatcher(graph, ctx, constants, false).run();
}

AttentionPlan plan_scaled_dot_product_attention(const CapturedGraph& graph, const LowerContext& ctx,
                                                std::vector<at::Tensor>& constants) {
#if TCPROF_HAVE_SDPA
  AttentionPlan plan = AttentionMatcher(graph, ctx, constants, true).run();
  for (auto& k : plan.kernels) k.kind = WindowKernel::Kind::ScaledDotProductAttention;
  return plan;
#else
  (void)ctx;
  (void)constants;
  AttentionPlan none;
  none.kernel_of_op.assign(graph.ops.size(), -1);
  return none;
#endif
}

}  // namespace tcprof
