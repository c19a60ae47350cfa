// Reductions split at the row. A sum over the trailing dims and some leading ones (batch norm's
// per-channel gradient sums over [0, 2, 3]) is no row reduction, so it ran as a LibTorch call
// over a tensor its producer kernel had to write out first. As a row sum over the trailing dims
// followed by a sum of the row totals over the leading ones, the big part is a row kernel that
// fuses with its producer (nothing written but the row totals). The small part is a row sum too:
// of the totals with the leading dims permuted last (a view), N values per channel.
#include <algorithm>

#include <ATen/ATen.h>

#include "compiler/backends/cpp/passes/pass_builder.h"

namespace tcprof {
namespace {

// Rows shorter than this gain nothing from the split.
constexpr int64_t kMinRow = 16;

bool constant_dims(const Arg& a, std::vector<int64_t>* dims) {
  if (a.kind != Arg::Kind::Constant || !a.constant.isIntList()) return false;
  *dims = a.constant.toIntVector();
  return true;
}

// The second stage, emitted just before the first reader of the sum's result.
struct Pending {
  int result = -1;       // the original sum's output slot
  int partial = -1;      // the row totals
  std::vector<int64_t> lead;
  bool keepdim = false;
  const GraphOp* origin = nullptr;
};

}  // namespace

int split_reductions(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  PassBuilder b(ctx);
  std::vector<GraphOp> original = b.take_ops();
  // Second stages wait until just before their result's first reader (or the end), so that the
  // row sums of one producer stay next to each other and join its kernel together.
  std::vector<Pending> pending;
  auto finish = [&](const Pending& p) {
    const at::Tensor totals = ctx.examples[static_cast<size_t>(p.partial)].toTensor();
    if (p.keepdim) {  // the reduced dims stay in place as 1s: one LibTorch sum of the totals
      b.rename(p.result, b.emit("aten::sum", {Val{p.partial}, p.lead, true}, p.origin, at::sum(totals, p.lead, true)).slot);
      return;
    }
    std::vector<int64_t> order;
    for (int64_t d = 0; d < totals.dim(); ++d) {
      if (std::find(p.lead.begin(), p.lead.end(), d) == p.lead.end()) order.push_back(d);
    }
    order.insert(order.end(), p.lead.begin(), p.lead.end());
    std::vector<int64_t> last;
    for (size_t k = 0; k < p.lead.size(); ++k) last.push_back(static_cast<int64_t>(order.size() - p.lead.size() + k));
    at::Tensor moved = totals.permute(order);
    Val permuted = b.emit("aten::permute", {Val{p.partial}, order}, p.origin, moved);
    b.rename(p.result, b.emit("aten::sum", {permuted, last, false}, p.origin, at::sum(moved, last, false)).slot);
  };
  auto flush_readers_of = [&](const GraphOp& reader) {
    std::vector<int> reads = slots_read(reader);
    for (auto it = pending.begin(); it != pending.end();) {
      if (std::find(reads.begin(), reads.end(), it->result) != reads.end()) {
        finish(*it);
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
  };
  int count = 0;
  for (GraphOp& op : original) {
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
      g.ops.push_back(std::move(op));
      continue;
    }
    const at::Tensor t = ctx.examples[static_cast<size_t>(op.args[0].slot)].toTensor();
    const int64_t rank = t.dim();
    for (auto& d : dims) d = d < 0 ? d + rank : d;
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    if (dims.front() < 0 || dims.back() >= rank) {  // LibTorch will say what is wrong
      g.ops.push_back(std::move(op));
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
      g.ops.push_back(std::move(op));
      continue;
    }
    const bool keepdim = op.args[2].constant.toBool();
    Val partial = b.emit("aten::sum", {Val{op.args[0].slot}, row, keepdim}, &op, at::sum(t, row, keepdim));
    // The leading dims keep their numbers: they lie before the row.
    pending.push_back({op.outputs[0], partial.slot, lead, keepdim, &op});  // `original` outlives the pass's emits
    ++count;
  }
  for (const Pending& p : pending) finish(p);
  b.apply_renames();  // a split sum's readers, all after it, and the graph's outputs
  return count;
}

}  // namespace tcprof
