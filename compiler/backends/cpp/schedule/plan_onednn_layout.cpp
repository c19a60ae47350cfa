#include "compiler/backends/cpp/schedule/plan_onednn_layout.h"

#include <algorithm>
#include <set>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cpp/run/onednn_channel_ops.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "core/log.h"

namespace tcprof {
namespace {

class LayoutPlanner {
 public:
  LayoutPlanner(const CapturedGraph& g, const LowerContext& ctx, std::vector<at::Tensor>& constants)
      : g_(g), ctx_(ctx), constants_(constants) {
    readers_.resize(static_cast<size_t>(g.num_slots));
    producer_.assign(static_cast<size_t>(g.num_slots), -1);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      for (int s : slots_read(g.ops[i])) readers_[static_cast<size_t>(s)].push_back(static_cast<int>(i));
      for (int s : g.ops[i].outputs) producer_[static_cast<size_t>(s)] = static_cast<int>(i);
    }
    outputs_.insert(g.outputs.begin(), g.outputs.end());
    plan_.step_of_op.assign(g.ops.size(), -1);
    plan_.channel_op_of_op.assign(g.ops.size(), -1);
    final_of_.assign(static_cast<size_t>(g.num_slots), -1);
    chain_end_.assign(static_cast<size_t>(g.num_slots), false);
    for (const auto& op : g.ops) graph_writes_ = graph_writes_ || !is_pure_op(op.name);
  }

  OnednnLayoutPlan run() {
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      int op = static_cast<int>(i);
      if (!try_conv(op) && !try_residual_add(op) && !try_activation(op) && !try_pool(op)) try_channel_op(op);
    }
    assign_layouts();
    return std::move(plan_);
  }

 private:
  const at::Tensor* example(int slot) const {
    const c10::IValue& v = ctx_.slots[static_cast<size_t>(slot)];
    return v.isTensor() ? &v.toTensor() : nullptr;
  }
  static bool plain_float4d(const at::Tensor* t) { return dense_float4d(t) && t->is_contiguous(); }
  // NCHW or channels-last, as a convolution's dense operands may be.
  static bool dense_float4d(const at::Tensor* t) {
    return t && t->scalar_type() == at::kFloat && t->dim() == 4 && !t->requires_grad() && t->device().is_cpu() &&
           (t->is_contiguous() || t->is_contiguous(at::MemoryFormat::ChannelsLast));
  }
  // Channels-last and not also NCHW (one channel, or 1x1 images, are both: NCHW then).
  static bool channels_last(const at::Tensor* t) { return !t->is_contiguous(); }
  // Where the op's computation happens: the conv step it is fused into, or its own place.
  int position(int op) const {
    int c = plan_.step_of_op[static_cast<size_t>(op)];
    return c >= 0 ? plan_.convs[static_cast<size_t>(c)].op : op;
  }
  // The conv whose step currently ends with `slot`, when `slot` may still take a post-op: read by
  // exactly one op and not a graph output.
  int open_conv(int slot) const {
    int c = final_of_[static_cast<size_t>(slot)];
    if (c < 0 || outputs_.count(slot) || readers_[static_cast<size_t>(slot)].size() != 1) return -1;
    return c;
  }
  void fuse(int c, int op) {
    OnednnConv& conv = plan_.convs[static_cast<size_t>(c)];
    conv.post_ops.push_back(op);
    final_of_[static_cast<size_t>(conv.output_slot)] = -1;
    chain_end_[static_cast<size_t>(conv.output_slot)] = false;
    conv.output_slot = g_.ops[static_cast<size_t>(op)].outputs[0];
    final_of_[static_cast<size_t>(conv.output_slot)] = c;
    chain_end_[static_cast<size_t>(conv.output_slot)] = true;
    plan_.step_of_op[static_cast<size_t>(op)] = c;
  }

  bool int_pair(const GraphOp& op, size_t a, int64_t* p, int64_t* q) const {
    if (op.args[a].kind == Arg::Kind::Sym) return false;
    c10::IValue v = ctx_.arg(op, a);
    if (!v.isIntList()) return false;
    auto l = v.toIntVector();
    if (l.size() == 1) l.push_back(l[0]);
    if (l.size() != 2) return false;
    *p = l[0], *q = l[1];
    return true;
  }

  bool try_conv(int i) {
    const GraphOp& op = g_.ops[static_cast<size_t>(i)];
    if (op.name != "aten::conv2d" || op.args.size() < 7 || op.outputs.size() != 1) return false;
    if (op.args[0].kind != Arg::Kind::Slot || op.args[1].kind != Arg::Kind::Constant || !op.args[1].constant.isTensor()) {
      return false;
    }
    for (size_t a = 2; a < op.args.size(); ++a) {
      if (op.args[a].kind != Arg::Kind::Constant) return false;
    }
    const at::Tensor* x = example(op.args[0].slot);
    const at::Tensor* y = example(op.outputs[0]);
    const at::Tensor& w = op.args[1].constant.toTensor();
    if (!dense_float4d(x) || !y || y->dim() != 4 || w.dim() != 4 || w.scalar_type() != at::kFloat) return false;
    c10::IValue b = ctx_.arg(op, 2);
    if (!b.isNone() && (!b.isTensor() || b.toTensor().scalar_type() != at::kFloat || b.toTensor().dim() != 1)) return false;
    OnednnConv c;
    c.op = i;
    c.input_slot = op.args[0].slot;
    c.conv_slot = c.output_slot = op.outputs[0];
    c.input_channels_last = channels_last(x);
    c.n = x->size(0), c.c = x->size(1), c.h = x->size(2), c.w = x->size(3);
    c.oc = y->size(1), c.oh = y->size(2), c.ow = y->size(3);
    c.kh = w.size(2), c.kw = w.size(3);
    if (!int_pair(op, 3, &c.sh, &c.sw) || !int_pair(op, 4, &c.ph, &c.pw) || !int_pair(op, 5, &c.dh, &c.dw)) return false;
    if (!ctx_.arg(op, 6).isInt()) return false;
    c.groups = ctx_.arg(op, 6).toInt();
    if (c.groups < 1 || c.c % c.groups != 0 || c.oc % c.groups != 0 || w.size(1) * c.groups != c.c || w.size(0) != c.oc) {
      return false;
    }
    if (c.n == 0 || c.oh <= 0 || c.ow <= 0) return false;
    take_input_scale(c);
    return add_conv(std::move(c), w, b.isTensor() ? std::optional<at::Tensor>(b.toTensor()) : std::nullopt);
  }

  bool add_conv(OnednnConv c, const at::Tensor& w, const std::optional<at::Tensor>& bias) {
    int index = static_cast<int>(plan_.convs.size());
    c.weight = static_cast<int>(constants_.size());
    constants_.push_back(w.contiguous());
    if (bias) {
      c.bias = static_cast<int>(constants_.size());
      constants_.push_back(bias->contiguous());
    }
    plan_.convs.push_back(std::move(c));
    plan_.step_of_op[static_cast<size_t>(plan_.convs.back().op)] = index;
    if (plan_.convs.back().scale_op >= 0) plan_.step_of_op[static_cast<size_t>(plan_.convs.back().scale_op)] = index;
    final_of_[static_cast<size_t>(plan_.convs.back().output_slot)] = index;
    chain_end_[static_cast<size_t>(plan_.convs.back().output_slot)] = true;
    return true;
  }

  // The convolution's input is mul(x, s), s a per-channel [N, C, 1, 1] value, and nothing else
  // reads the product: the step multiplies x by s itself, in x's layout, so that x stays in the
  // chain (a squeeze-and-excitation block's scale before its projection).
  void take_input_scale(OnednnConv& c) {
    const int product = c.input_slot, p = producer_[static_cast<size_t>(product)];
    if (p < 0 || plan_.step_of_op[static_cast<size_t>(p)] >= 0 || outputs_.count(product) ||
        readers_[static_cast<size_t>(product)].size() != 1) {
      return;
    }
    const GraphOp& mul = g_.ops[static_cast<size_t>(p)];
    if (mul.name != "aten::mul" || mul.args.size() != 2 || mul.outputs.size() != 1) return;
    if (mul.args[0].kind != Arg::Kind::Slot || mul.args[1].kind != Arg::Kind::Slot) return;
    for (size_t side = 0; side < 2; ++side) {
      const int x = mul.args[side].slot, scale = mul.args[1 - side].slot;
      const at::Tensor* xt = example(x);
      const at::Tensor* st = example(scale);
      if (x == scale || !plain_float4d(xt) || xt->sizes() != example(product)->sizes()) continue;
      if (!st || st->scalar_type() != at::kFloat || !st->device().is_cpu() || st->requires_grad() || st->dim() != 4 ||
          st->size(0) != c.n || st->size(1) != c.c || st->size(2) != 1 || st->size(3) != 1) {
        continue;
      }
      if (!nothing_impure_between(p, c.op)) return;  // x or s could change before the conv runs
      c.input_slot = x;
      c.input_channels_last = false;  // x is NCHW (above)
      c.scale_op = p;
      c.scale_slot = scale;
      return;
    }
  }

  // adaptive_avg_pool2d(x, 1) of a value a conv step ends with: the step pools its own output, in
  // its layout, so that x need not leave the chain for it (a squeeze-and-excitation block's pool).
  bool try_pool(int j) {
    const GraphOp& op = g_.ops[static_cast<size_t>(j)];
    if (op.name != "aten::adaptive_avg_pool2d" || op.args.size() != 2 || op.outputs.size() != 1) return false;
    if (op.args[0].kind != Arg::Kind::Slot || op.args[1].kind != Arg::Kind::Constant || !op.args[1].constant.isIntList()) {
      return false;
    }
    const std::vector<int64_t> size = op.args[1].constant.toIntVector();
    if (size != std::vector<int64_t>{1, 1} && size != std::vector<int64_t>{1}) return false;
    const int x = op.args[0].slot, c = final_of_[static_cast<size_t>(x)];
    if (c < 0) return false;
    OnednnConv& conv = plan_.convs[static_cast<size_t>(c)];
    const at::Tensor* out = example(op.outputs[0]);
    if (conv.pool_op >= 0 || !out || out->scalar_type() != at::kFloat || out->dim() != 4 || out->size(0) != conv.n ||
        out->size(1) != conv.oc || out->size(2) != 1 || out->size(3) != 1) {
      return false;
    }
    if (!nothing_impure_between(conv.op, j)) return false;  // x could change before the pool reads it
    conv.pool_op = j;
    conv.pooled_slot = op.outputs[0];
    plan_.step_of_op[static_cast<size_t>(j)] = c;
    final_of_[static_cast<size_t>(x)] = -1;  // nothing fuses after the pool
    return true;
  }

  // add(a, b) with a or b the open end of a conv step: the sum post-op of whichever of the two runs
  // later, with the other operand (already computed by then) as its residual.
  bool try_residual_add(int j) {
    const GraphOp& op = g_.ops[static_cast<size_t>(j)];
    if (op.name != "aten::add" || op.args.size() < 2 || op.outputs.size() != 1) return false;
    if (op.args[0].kind != Arg::Kind::Slot || op.args[1].kind != Arg::Kind::Slot) return false;
    if (op.args.size() > 2) {
      if (op.args[2].kind != Arg::Kind::Constant) return false;
      c10::IValue alpha = op.args[2].constant;
      if (!alpha.isScalar() || alpha.toScalar().toDouble() != 1.0) return false;
    }
    const at::Tensor* out = example(op.outputs[0]);
    int best = -1, residual = -1;
    for (int side = 0; side < 2; ++side) {
      int slot = op.args[static_cast<size_t>(side)].slot, other = op.args[static_cast<size_t>(1 - side)].slot;
      int c = open_conv(slot);
      if (c < 0 || slot == other) continue;
      const OnednnConv& conv = plan_.convs[static_cast<size_t>(c)];
      if (conv.residual_slot >= 0 || conv.activation != OnednnConv::Activation::None) continue;
      const at::Tensor* r = example(other);
      // The residual's dense form is the output's (the step reads it in the output's layout).
      if (!dense_float4d(r) || !dense_float4d(out) || channels_last(r) != channels_last(out) || r->sizes() != out->sizes() ||
          example(slot)->sizes() != out->sizes()) {
        continue;
      }
      int p = producer_[static_cast<size_t>(other)];
      if (p >= 0 && position(p) >= conv.op) continue;  // not computed yet when the conv runs
      if (!nothing_impure_between(conv.op, j)) continue;
      if (best < 0 || conv.op > plan_.convs[static_cast<size_t>(best)].op) best = c, residual = other;
    }
    if (best < 0) return false;
    OnednnConv& conv = plan_.convs[static_cast<size_t>(best)];
    conv.residual_slot = residual;
    fuse(best, j);
    return true;
  }

  // cat([a, b, ...], 1) of chain values, or max_pool2d of one: a channel op on the chain's buffers
  // (run/onednn_channel_ops.h), whose output is a chain value in turn. Not in a graph with an op
  // that writes: a value kept blocked must not change after it is made.
  bool try_channel_op(int j) {
    const GraphOp& op = g_.ops[static_cast<size_t>(j)];
    if (graph_writes_ || op.outputs.size() != 1 || op.args.empty()) return false;
    const at::Tensor* out = example(op.outputs[0]);
    if (!plain_float4d(out)) return false;
    ChainChannelOp k;
    k.op = j;
    k.output_slot = op.outputs[0];
    k.n = out->size(0), k.c = out->size(1), k.oh = out->size(2), k.ow = out->size(3);
    auto take_input = [&](const Arg& a) {
      if (a.kind != Arg::Kind::Slot || !chain_end_[static_cast<size_t>(a.slot)]) return false;
      const at::Tensor* x = example(a.slot);
      if (!plain_float4d(x) || x->size(0) != k.n) return false;
      if (!k.input_slots.empty() && (x->size(2) != k.h || x->size(3) != k.w)) return false;
      k.h = x->size(2), k.w = x->size(3);
      k.input_slots.push_back(a.slot);
      k.input_channels.push_back(x->size(1));
      return true;
    };
    if (op.name == "aten::cat") {
      if (op.args.size() != 2 || op.args[0].kind != Arg::Kind::List || op.args[0].items.empty()) return false;
      if (op.args[1].kind != Arg::Kind::Constant || !op.args[1].constant.isInt()) return false;
      const int64_t dim = op.args[1].constant.toInt();
      if (dim != 1 && dim != -3) return false;
      for (const Arg& item : op.args[0].items) {
        if (!take_input(item)) return false;
      }
      int64_t channels = 0;
      for (int64_t c : k.input_channels) channels += c;
      if (channels != k.c || k.h != k.oh || k.w != k.ow) return false;
      k.kind = ChainChannelOp::Kind::Cat;
    } else if (op.name == "aten::max_pool2d") {
      if (op.args.size() != 6 || !take_input(op.args[0]) || k.input_channels[0] != k.c) return false;
      for (size_t a = 1; a < 6; ++a) {
        if (op.args[a].kind != Arg::Kind::Constant) return false;
      }
      if (!int_pair(op, 1, &k.kh, &k.kw) || !int_pair(op, 3, &k.ph, &k.pw) || !int_pair(op, 4, &k.dh, &k.dw)) return false;
      c10::IValue stride = ctx_.arg(op, 2);
      if (stride.isIntList() && stride.toIntVector().empty()) {
        k.sh = k.kh, k.sw = k.kw;  // PyTorch's default: the kernel size
      } else if (!int_pair(op, 2, &k.sh, &k.sw)) {
        return false;
      }
      if (!ctx_.arg(op, 5).isBool()) return false;
      k.ceil_mode = ctx_.arg(op, 5).toBool();
      k.kind = ChainChannelOp::Kind::MaxPool;
    } else {
      return false;
    }
    k.name = fmt::format("c{}_{}", plan_.channel_ops.size(), channel_op_name(k.kind));
    plan_.channel_op_of_op[static_cast<size_t>(j)] = static_cast<int>(plan_.channel_ops.size());
    plan_.channel_ops.push_back(std::move(k));
    chain_end_[static_cast<size_t>(op.outputs[0])] = true;
    return true;
  }

  bool nothing_impure_between(int from, int to) const {
    for (int k = from + 1; k < to; ++k) {
      if (!is_pure_op(g_.ops[static_cast<size_t>(k)].name)) return false;
    }
    return true;
  }

  bool try_activation(int j) {
    const GraphOp& op = g_.ops[static_cast<size_t>(j)];
    if (op.args.empty() || op.args[0].kind != Arg::Kind::Slot || op.outputs.size() != 1) return false;
    int c = open_conv(op.args[0].slot);
    if (c < 0) return false;
    for (size_t a = 1; a < op.args.size(); ++a) {
      if (op.args[a].kind != Arg::Kind::Constant) return false;
    }
    using A = OnednnConv::Activation;
    A act = A::None;
    float lo = 0, hi = 0;
    if (op.name == "aten::relu") act = A::Relu;
    else if (op.name == "aten::relu6") act = A::Clip, lo = 0, hi = 6;
    else if (op.name == "aten::hardtanh") {
      act = A::Clip;
      lo = op.args.size() > 1 ? static_cast<float>(ctx_.arg(op, 1).toScalar().toDouble()) : -1.f;
      hi = op.args.size() > 2 ? static_cast<float>(ctx_.arg(op, 2).toScalar().toDouble()) : 1.f;
      if (lo > 0 || hi < 0) return false;  // it would change a blocked layout's zero padding
    } else if (op.name == "aten::hardswish") act = A::Hardswish;
    else if (op.name == "aten::silu") act = A::Silu;
    else if (op.name == "aten::sigmoid") act = A::Sigmoid;
    else if (op.name == "aten::tanh") act = A::Tanh;
    else if (op.name == "aten::gelu") {
      if (op.args.size() > 1 && (!op.args[1].constant.isString() || op.args[1].constant.toStringRef() != "none")) return false;
      act = A::Gelu;
    }
    if (act == A::None) return false;
    OnednnConv& conv = plan_.convs[static_cast<size_t>(c)];
    if (conv.activation != A::None) return false;
    conv.activation = act;
    conv.alpha = lo, conv.beta = hi;
    fuse(c, j);
    return true;
  }

  // Each step's input, residual and output layout from who produces and who reads each value; then
  // the primitives with their post-ops, and whether a step may write over its residual.
  void assign_layouts() {
    std::vector<bool> read_blocked(static_cast<size_t>(g_.num_slots), false), read_dense(static_cast<size_t>(g_.num_slots), false);
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (plan_.channel_op_of_op[i] >= 0) {
        for (int s : slots_read(g_.ops[i])) read_blocked[static_cast<size_t>(s)] = true;  // chain values, as they are
        continue;
      }
      int c = plan_.step_of_op[i];
      for (int s : slots_read(g_.ops[i])) {
        if (c >= 0) {
          const OnednnConv& conv = plan_.convs[static_cast<size_t>(c)];
          if (static_cast<int>(i) == conv.scale_op && s == conv.scale_slot) {
            read_dense[static_cast<size_t>(s)] = true;  // the scale is read as a plain tensor
            continue;
          }
          bool inside = s == conv.conv_slot || (s != conv.input_slot && s != conv.residual_slot);
          for (int p : conv.post_ops) {
            if (s == g_.ops[static_cast<size_t>(p)].outputs[0]) inside = true;
          }
          if (inside) continue;
          if (chain_end_[static_cast<size_t>(s)]) continue;  // a hand-off between chain steps
        }
        read_dense[static_cast<size_t>(s)] = true;
      }
    }
    for (int s : g_.outputs) read_dense[static_cast<size_t>(s)] = true;
    // A value kept in both forms must not change after it is made: an in-place op (on it or on a
    // view of it) would update the dense form only. In a graph with any op that writes, a value
    // with dense readers is handed to the next convolution dense as well (fuzz case
    // 157418840943025: add_ on a convolution output another convolution then read).
    auto hand_off_blocked = [&](int slot) {
      return chain_end_[static_cast<size_t>(slot)] && !(graph_writes_ && read_dense[static_cast<size_t>(slot)]);
    };
    for (auto& c : plan_.convs) {
      if (hand_off_blocked(c.input_slot)) {
        c.input_layout = ValueLayout::Blocked;
        read_blocked[static_cast<size_t>(c.input_slot)] = true;
      } else {
        read_dense[static_cast<size_t>(c.input_slot)] = true;
      }
      if (c.residual_slot < 0) continue;
      if (hand_off_blocked(c.residual_slot)) {
        c.residual_layout = ValueLayout::Blocked;
        read_blocked[static_cast<size_t>(c.residual_slot)] = true;
      } else {
        read_dense[static_cast<size_t>(c.residual_slot)] = true;
      }
    }
    // A value nothing reads densely stays blocked, also when only its own step reads it (a pool).
    auto layout_of = [&](int slot) {
      const size_t s = static_cast<size_t>(slot);
      return !read_dense[s] ? ValueLayout::Blocked : read_blocked[s] ? ValueLayout::Both : ValueLayout::Dense;
    };
    for (auto& k : plan_.channel_ops) k.output_layout = layout_of(k.output_slot);
    for (auto& c : plan_.convs) {
      c.output_layout = layout_of(c.output_slot);
      const at::Tensor* y = example(c.output_slot);
      c.output_channels_last = y && dense_float4d(y) && channels_last(y);
    }
    for (size_t c = 0; c < plan_.convs.size(); ++c) {
      OnednnConv& conv = plan_.convs[c];
      if (conv.residual_slot >= 0 && conv.residual_layout == ValueLayout::Blocked) conv.residual_in_place = last_reader_is(conv);
      const char* act = activation_name(conv.activation);
      conv.name = fmt::format("d{}_{}conv{}{}{}{}", c, conv.scale_op >= 0 ? "mul_" : "", conv.residual_slot >= 0 ? "_add" : "",
                              conv.activation != OnednnConv::Activation::None ? "_" : "",
                              conv.activation != OnednnConv::Activation::None ? act : "", conv.pool_op >= 0 ? "_pool" : "");
      std::optional<at::Tensor> bias;
      if (conv.bias >= 0) bias = constants_[static_cast<size_t>(conv.bias)];
      plan_.primitives.push_back(std::make_shared<OnednnConvolution>(conv, constants_[static_cast<size_t>(conv.weight)], bias));
    }
  }

  // The step may write its output over the residual's blocked buffer when every other reader of
  // the residual has run before it and the residual is not a graph output.
  bool last_reader_is(const OnednnConv& conv) const {
    if (outputs_.count(conv.residual_slot)) return false;
    int add = conv.post_ops.front();
    for (int r : readers_[static_cast<size_t>(conv.residual_slot)]) {
      if (r != add && position(r) >= conv.op) return false;
    }
    return true;
  }

  const CapturedGraph& g_;
  const LowerContext& ctx_;
  std::vector<at::Tensor>& constants_;
  std::vector<std::vector<int>> readers_;
  std::vector<int> producer_;
  std::set<int> outputs_;
  std::vector<int> final_of_;  // slot -> conv whose step currently ends with it
  std::vector<bool> chain_end_;  // slot -> a chain step (convolution or channel op) ends with it
  bool graph_writes_ = false;    // an op of the graph writes a value in place
  OnednnLayoutPlan plan_;
};

}  // namespace

OnednnLayoutPlan no_layout_plan(const CapturedGraph& graph) {
  OnednnLayoutPlan none;
  none.step_of_op.assign(graph.ops.size(), -1);
  none.channel_op_of_op.assign(graph.ops.size(), -1);
  return none;
}

OnednnLayoutPlan plan_onednn_layout(const CapturedGraph& graph, const LowerContext& ctx, std::vector<at::Tensor>& constants) {
  if (!onednn_layout_enabled()) {
    return no_layout_plan(graph);
  }
  try {
    return LayoutPlanner(graph, ctx, constants).run();
  } catch (const std::exception& e) {
    // This oneDNN cannot build one of the primitives: every convolution stays as it was.
    log(LogChannel::Fusion, "layout pass: convolutions stay LibTorch calls: {}", e.what());
    return no_layout_plan(graph);
  }
}

LayoutReport layout_report(const CapturedGraph& g, const std::vector<OnednnConv>& convs,
                           const std::vector<ChainChannelOp>& channel_ops,
                           const std::vector<std::shared_ptr<OnednnConvolution>>& primitives) {
  LayoutReport r;
  const size_t slots = static_cast<size_t>(g.num_slots);
  std::vector<int> conv_ending_at(slots, -1), channel_op_ending_at(slots, -1);
  for (size_t c = 0; c < convs.size(); ++c) conv_ending_at[static_cast<size_t>(convs[c].output_slot)] = static_cast<int>(c);
  for (size_t k = 0; k < channel_ops.size(); ++k) {
    channel_op_ending_at[static_cast<size_t>(channel_ops[k].output_slot)] = static_cast<int>(k);
  }
  std::vector<std::vector<int>> readers(slots);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int s : slots_read(g.ops[i])) readers[static_cast<size_t>(s)].push_back(static_cast<int>(i));
  }
  auto where = [&](int op) {
    const GraphOp& o = g.ops[static_cast<size_t>(op)];
    return o.loc.known() ? fmt::format("{} at {}:{}", o.name, o.loc.file, o.loc.line) : o.name;
  };
  // The layout each chain value is in, and the step that makes it; channel ops come in graph
  // order, after the steps that make their inputs.
  std::vector<std::string> channel_format(channel_ops.size());
  auto value_format = [&](int slot) -> std::string {
    const int c = conv_ending_at[static_cast<size_t>(slot)];
    if (c >= 0) return primitives[static_cast<size_t>(c)]->output_format();
    const int k = channel_op_ending_at[static_cast<size_t>(slot)];
    return k >= 0 ? channel_format[static_cast<size_t>(k)] : std::string("nchw");
  };
  auto maker = [&](int slot) -> std::string {
    const int c = conv_ending_at[static_cast<size_t>(slot)];
    if (c >= 0) return convs[static_cast<size_t>(c)].name;
    const int k = channel_op_ending_at[static_cast<size_t>(slot)];
    return k >= 0 ? channel_ops[static_cast<size_t>(k)].name : std::string("?");
  };
  for (size_t k = 0; k < channel_ops.size(); ++k) {
    std::vector<std::string> formats;
    for (int s : channel_ops[k].input_slots) formats.push_back(value_format(s));
    channel_format[k] = channel_op_format(channel_ops[k], formats);
  }
  // A value's first reader outside the chains, for "leaves for ...".
  auto dense_reader = [&](int slot) -> std::string {
    for (int op : readers[static_cast<size_t>(slot)]) {
      bool in_chain = false;
      for (const auto& c : convs) {
        if (c.scale_op == op && c.scale_slot == slot) continue;  // the scale is read as a plain tensor
        const std::vector<int> ops = step_ops(c);
        in_chain = in_chain || std::find(ops.begin(), ops.end(), op) != ops.end();
      }
      for (const auto& k : channel_ops) in_chain = in_chain || k.op == op;
      if (!in_chain) return where(op);
    }
    return "graph output";
  };
  auto from_where = [&](int slot) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      for (int o : g.ops[i].outputs) {
        if (o == slot) return where(static_cast<int>(i));
      }
    }
    return std::string("graph input");
  };
  // `dense`: the value's dense form, the memory format eager gave it.
  auto leaving = [&](int slot, ValueLayout layout, const std::string& format, const std::string& name, const std::string& dense) {
    if (layout != ValueLayout::Blocked && format != dense) {
      r.reorders.push_back(fmt::format("%{} {} -> {} out of {} (for {})", slot, format, dense, name, dense_reader(slot)));
    }
  };
  for (size_t c = 0; c < convs.size(); ++c) {
    const OnednnConv& conv = convs[c];
    const OnednnConvolution& p = *primitives[c];
    ++r.convolutions;
    r.post_ops += static_cast<int>(step_ops(conv).size()) - 1;
    if (p.winograd()) ++r.winograd;
    if (r.format.empty() && p.output_format() != "nchw") r.format = p.output_format();
    auto entering = [&](int slot, ValueLayout layout, const std::string& want, const char* role, const std::string& dense) {
      if (layout == ValueLayout::Blocked) {
        const std::string have = value_format(slot);
        if (have == want) ++r.blocked_values;
        else r.reorders.push_back(fmt::format("%{} {} -> {} into {} ({}, from {})", slot, have, want, conv.name, role, maker(slot)));
      } else if (want != dense) {
        r.reorders.push_back(fmt::format("%{} {} -> {} into {} ({}, from {})", slot, dense, want, conv.name, role, from_where(slot)));
      }
    };
    entering(conv.input_slot, conv.input_layout, p.input_format(), "input", conv.dense_input_format());
    if (conv.residual_slot >= 0) {
      entering(conv.residual_slot, conv.residual_layout, p.output_format(), "residual", conv.dense_output_format());
    }
    leaving(conv.output_slot, conv.output_layout, p.output_format(), conv.name, conv.dense_output_format());
  }
  for (size_t k = 0; k < channel_ops.size(); ++k) {
    const ChainChannelOp& op = channel_ops[k];
    ++r.channel_ops;
    for (int s : op.input_slots) {
      const std::string have = value_format(s);
      if (have == channel_format[k]) ++r.blocked_values;
      else r.reorders.push_back(fmt::format("%{} {} -> nchw into {} (input, from {})", s, have, op.name, maker(s)));
    }
    leaving(op.output_slot, op.output_layout, channel_format[k], op.name, "nchw");
  }
  return r;
}

}  // namespace tcprof
