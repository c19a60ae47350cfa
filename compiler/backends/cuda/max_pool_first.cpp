#include "compiler/backends/cuda/max_pool_first.h"

#include <cmath>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "compiler/backends/cpp/passes/graph_passes.h"

namespace tcprof {
namespace {

bool is_floating_tensor(const c10::IValue& v) {
  return v.isTensor() && v.toTensor().defined() && v.toTensor().is_floating_point();
}

// Whether the constant `a`, added to or subtracted from `x`, is the same at every position of a
// pooling window (size 1 in the last two dims) and leaves x's shape and dtype as they are. Finite,
// so that no infinity meets one of x's (-inf + inf is NaN before the pool, not after it): a number
// as the op computes with it, in float for every dtype but f64 (1e39 is inf there).
bool same_across_windows(const Arg& a, const at::Tensor& x) {
  if (a.kind != Arg::Kind::Constant) return false;
  const c10::IValue& c = a.constant;
  if (c.isDouble() || c.isInt()) {
    const double d = c.isDouble() ? c.toDouble() : static_cast<double>(c.toInt());
    return x.scalar_type() == at::kDouble ? std::isfinite(d) : std::isfinite(static_cast<float>(d));
  }
  if (!is_floating_tensor(c)) return false;
  const at::Tensor& t = c.toTensor();
  if (t.scalar_type() != x.scalar_type() || t.device() != x.device() || t.dim() > x.dim()) return false;
  for (int64_t d = 1; d <= t.dim(); ++d) {  // aligned from the right, as broadcasting aligns
    if (t.size(-d) != 1 && (d <= 2 || t.size(-d) != x.size(-d))) return false;
  }
  return at::isfinite(t).all().item<bool>();
}

// The argument through which `op` may follow the pool instead of preceding it, or -1: a ReLU's
// input, or the tensor side of an add or sub (alpha 1) of a constant that is the same across each
// window. The value it reads must be a floating tensor of the op's own output shape.
int chain_arg(const PassContext& ctx, const GraphOp& op) {
  if (op.outputs.size() != 1 || !is_floating_tensor(ctx.examples[static_cast<size_t>(op.outputs[0])])) return -1;
  const at::Tensor& out = ctx.examples[static_cast<size_t>(op.outputs[0])].toTensor();
  auto reads_value = [&](const Arg& a) {
    if (a.kind != Arg::Kind::Slot || !is_floating_tensor(ctx.examples[static_cast<size_t>(a.slot)])) return false;
    const at::Tensor& x = ctx.examples[static_cast<size_t>(a.slot)].toTensor();
    return x.sizes() == out.sizes() && x.scalar_type() == out.scalar_type();
  };
  if (op.name == "aten::relu") return op.args.size() == 1 && reads_value(op.args[0]) ? 0 : -1;
  const bool add = op.name == "aten::add";
  if ((!add && op.name != "aten::sub") || op.args.size() < 2 || op.args.size() > 3) return -1;
  if (op.args.size() == 3) {  // the ops the passes build leave alpha out
    const Arg& alpha = op.args[2];
    if (alpha.kind != Arg::Kind::Constant || !alpha.constant.isScalar() || alpha.constant.toScalar().toDouble() != 1.0) return -1;
  }
  // sub(c, x) falls as x grows: only x - c follows the pool.
  for (int k = 0; k < (add ? 2 : 1); ++k) {
    if (reads_value(op.args[static_cast<size_t>(k)]) && same_across_windows(op.args[static_cast<size_t>(1 - k)], out)) return k;
  }
  return -1;
}

std::string shape_text(const at::Tensor& t) {
  std::string s;
  for (int64_t d : t.sizes()) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

struct ChainOp {
  size_t op = 0;
  int arg = 0;  // chain_arg
};

}  // namespace

std::vector<std::string> max_pool_first(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  std::vector<std::string> moved;
  for (const GraphOp& op : g.ops) {
    if (writes_in_place(op)) return moved;  // the pool would read its input later than the chain did
  }
  const std::vector<int> readers = reader_counts(g);  // a graph output counts as a reader
  std::vector<int> producer(static_cast<size_t>(g.num_slots), -1);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int s : g.ops[i].outputs) producer[static_cast<size_t>(s)] = static_cast<int>(i);
  }
  std::vector<std::vector<ChainOp>> chain_of(g.ops.size());  // by pool: the ops it goes before, first to last
  std::vector<bool> in_chain(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& pool = g.ops[i];
    if (pool.name != "aten::max_pool2d" || pool.outputs.size() != 1 || pool.args.empty() || pool.args[0].kind != Arg::Kind::Slot) continue;
    std::vector<ChainOp>& chain = chain_of[i];
    for (int s = pool.args[0].slot; readers[static_cast<size_t>(s)] == 1;) {
      const int p = producer[static_cast<size_t>(s)];
      const int k = p < 0 ? -1 : chain_arg(ctx, g.ops[static_cast<size_t>(p)]);
      if (k < 0) break;
      chain.insert(chain.begin(), ChainOp{static_cast<size_t>(p), k});
      in_chain[static_cast<size_t>(p)] = true;
      s = g.ops[static_cast<size_t>(p)].args[static_cast<size_t>(k)].slot;
    }
    if (chain.empty()) continue;
    const GraphOp& first = g.ops[chain.front().op];
    const at::Tensor& before = ctx.examples[static_cast<size_t>(first.args[static_cast<size_t>(chain.front().arg)].slot)].toTensor();
    const c10::IValue& after = ctx.examples[static_cast<size_t>(pool.outputs[0])];
    std::string ops;
    for (const ChainOp& c : chain) ops += (ops.empty() ? "" : ", ") + g.ops[c.op].name;
    moved.push_back(after.isTensor() ? fmt::format("max_pool2d before {}: they run on its {} output, not its {} input", ops,
                                                   shape_text(after.toTensor()), shape_text(before))
                                     : fmt::format("max_pool2d before {}", ops));
  }
  if (moved.empty()) return moved;
  // The pool takes the chain's place at its own position; the chain follows it on fresh slots, and
  // its last op writes the pool's old output, so every later reader is unchanged.
  std::vector<GraphOp> original = std::move(g.ops);
  g.ops.clear();
  for (size_t i = 0; i < original.size(); ++i) {
    if (in_chain[i]) continue;  // emitted after its pool
    const std::vector<ChainOp>& chain = chain_of[i];
    if (chain.empty()) {
      g.ops.push_back(std::move(original[i]));
      continue;
    }
    GraphOp pool = std::move(original[i]);
    const int result = pool.outputs[0];
    pool.args[0] = original[chain.front().op].args[static_cast<size_t>(chain.front().arg)];
    int value = g.num_slots++;
    pool.outputs[0] = value;
    g.ops.push_back(std::move(pool));
    for (size_t n = 0; n < chain.size(); ++n) {
      GraphOp op = std::move(original[chain[n].op]);
      op.args[static_cast<size_t>(chain[n].arg)].slot = value;
      value = n + 1 == chain.size() ? result : g.num_slots++;
      op.outputs[0] = value;
      g.ops.push_back(std::move(op));
    }
  }
  ctx.examples.resize(static_cast<size_t>(g.num_slots));
  return moved;
}

}  // namespace tcprof
