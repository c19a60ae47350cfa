// Reductions split at the row. A sum over the trailing dims and some leading ones (batch norm's
// per-channel gradient sums over [0, 2, 3]) is no row reduction, so it ran as a LibTorch call
// over a tensor its producer kernel had to write out first. As a row sum over the trailing dims
// followed by a small sum over the leading ones, the big part is a row kernel that fuses with
// its producer (nothing written but the row totals), and the rest sums N values per channel.
#include <algorithm>

#include <ATen/ATen.h>

#include "compiler/backends/cpp/passes/graph_passes.h"

namespace tcprof {
namespace {

// Rows shorter than this gain nothing from the split.
constexpr int64_t kMinRow = 16;

bool constant_dims(const Arg& a, std::vector<int64_t>* dims) {
  if (a.kind != Arg::Kind::Constant || !a.constant.isIntList()) return false;
  *dims = a.constant.toIntVector();
  return true;
}

Arg constant(c10::IValue v) {
  Arg a;
  a.kind = Arg::Kind::Constant;
  a.constant = std::move(v);
  return a;
}

}  // namespace

int split_reductions(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  std::vector<GraphOp> ops;
  ops.reserve(g.ops.size());
  // Second stages wait until just before their result's first reader (or the end), so that the
  // row sums of one producer stay next to each other and join its kernel together.
  std::vector<std::pair<int, GraphOp>> pending;  // (result slot, op)
  auto flush_readers_of = [&](const GraphOp& reader) {
    std::vector<int> reads = slots_read(reader);
    for (auto it = pending.begin(); it != pending.end();) {
      if (std::find(reads.begin(), reads.end(), it->first) != reads.end()) {
        ops.push_back(std::move(it->second));
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
  };
  int count = 0;
  for (GraphOp& op : g.ops) {
    flush_readers_of(op);
    std::vector<int64_t> dims;
    bool candidate = op.name == "aten::sum" && op.args.size() >= 3 && op.outputs.size() == 1 &&
                     op.args[0].kind == Arg::Kind::Slot && constant_dims(op.args[1], &dims) &&
                     op.args[2].kind == Arg::Kind::Constant && op.args[2].constant.isBool() &&
                     (op.args.size() < 4 || (op.args[3].kind == Arg::Kind::Constant && op.args[3].constant.isNone()));
    if (candidate) {
      const c10::IValue& x = ctx.examples[static_cast<size_t>(op.args[0].slot)];
      candidate = x.isTensor() && x.toTensor().is_floating_point() && !dims.empty();
    }
    if (!candidate) {
      ops.push_back(std::move(op));
      continue;
    }
    const at::Tensor t = ctx.examples[static_cast<size_t>(op.args[0].slot)].toTensor();
    const int64_t rank = t.dim();
    for (auto& d : dims) d = d < 0 ? d + rank : d;
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    if (dims.front() < 0 || dims.back() >= rank) {  // LibTorch will say what is wrong
      ops.push_back(std::move(op));
      continue;
    }
    // The trailing run of reduced dims is the row; what is left of `dims` lies before it.
    std::vector<int64_t> row, lead;
    int64_t expect = rank - 1, row_len = 1;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      if (*it == expect && lead.empty()) {
        row.insert(row.begin(), *it);
        row_len *= t.size(*it);
        --expect;
      } else {
        lead.insert(lead.begin(), *it);
      }
    }
    if (row.empty() || lead.empty() || row_len < kMinRow) {
      ops.push_back(std::move(op));
      continue;
    }
    const bool keepdim = op.args[2].constant.toBool();
    // The first stage keeps the op's node (the same overload: sum.dim_IntList) with other dims.
    GraphOp rows = op;
    int partial = g.num_slots++;
    rows.args[1] = constant(c10::IValue(row));
    rows.outputs = {partial};
    ctx.examples.resize(static_cast<size_t>(g.num_slots));
    ctx.examples[static_cast<size_t>(partial)] = at::sum(t, row, keepdim);
    GraphOp rest = std::move(op);
    rest.args[0].slot = partial;
    rest.args[1] = constant(c10::IValue(lead));  // the leading dims keep their numbers
    ops.push_back(std::move(rows));
    pending.emplace_back(rest.outputs[0], std::move(rest));
    ++count;
  }
  for (auto& [slot, op] : pending) ops.push_back(std::move(op));
  g.ops = std::move(ops);
  return count;
}

}  // namespace tcprof
