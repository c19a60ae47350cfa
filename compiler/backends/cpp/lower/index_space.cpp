#include "compiler/backends/cpp/lower/index_space.h"

#include <algorithm>

namespace tcprof {

bool broadcast_shapes(const std::vector<const std::vector<int64_t>*>& shapes, std::vector<int64_t>* out) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  out->assign(rank, 1);
  for (const auto* s : shapes) {
    size_t off = rank - s->size();
    for (size_t d = 0; d < s->size(); ++d) {
      int64_t v = (*s)[d];
      int64_t& o = (*out)[off + d];
      if (v == o || v == 1) continue;
      if (o != 1) return false;
      o = v;
    }
  }
  return true;
}

namespace {

// Operand strides aligned to `full`: missing leading dims and broadcast dims read stride 0.
std::vector<int64_t> aligned_strides(const std::vector<int64_t>& full, const OperandLayout& op) {
  std::vector<int64_t> st(full.size(), 0);
  size_t off = full.size() - op.sizes.size();
  for (size_t d = 0; d < op.sizes.size(); ++d) {
    st[off + d] = (op.sizes[d] == 1 && full[off + d] != 1) ? 0 : op.strides[d];
  }
  return st;
}

// Drops size-1 dims and merges mergeable neighbours of dims [0, n).
void merge_dims(std::vector<int64_t>& sizes, std::vector<std::vector<int64_t>>& strides) {
  std::vector<int64_t> ns;
  std::vector<std::vector<int64_t>> nst(strides.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !ns.empty();
    for (size_t k = 0; k < strides.size() && merge; ++k) merge = nst[k].back() == strides[k][d] * sizes[d];
    if (merge) {
      ns.back() *= sizes[d];
      for (size_t k = 0; k < strides.size(); ++k) nst[k].back() = strides[k][d];
    } else {
      ns.push_back(sizes[d]);
      for (size_t k = 0; k < strides.size(); ++k) nst[k].push_back(strides[k][d]);
    }
  }
  sizes = std::move(ns);
  strides = std::move(nst);
}

}  // namespace

void permute_index_space(const std::vector<int>& order, std::vector<int64_t>& full, std::vector<OperandLayout>& operands) {
  std::vector<int64_t> permuted(full.size());
  for (size_t d = 0; d < order.size(); ++d) permuted[d] = full[static_cast<size_t>(order[d])];
  for (auto& op : operands) {
    std::vector<int64_t> st = aligned_strides(full, op), pst(full.size());
    for (size_t d = 0; d < order.size(); ++d) pst[d] = st[static_cast<size_t>(order[d])];
    op = {permuted, pst};
  }
  full = std::move(permuted);
}

bool canonicalize(const std::vector<int64_t>& full, int row_dims, const std::vector<OperandLayout>& operands,
                  int rank, IndexSpace* out) {
  std::vector<std::vector<int64_t>> st;
  st.reserve(operands.size());
  for (const auto& op : operands) {
    if (op.sizes.size() > full.size()) return false;
    st.push_back(aligned_strides(full, op));
  }
  size_t outer_n = full.size() - static_cast<size_t>(row_dims);
  std::vector<int64_t> outer(full.begin(), full.begin() + static_cast<long>(outer_n));
  std::vector<std::vector<int64_t>> outer_st(st.size());
  for (size_t k = 0; k < st.size(); ++k) outer_st[k].assign(st[k].begin(), st[k].begin() + static_cast<long>(outer_n));
  merge_dims(outer, outer_st);
  int64_t row = 1;
  std::vector<int64_t> row_st(st.size(), 0);
  if (row_dims > 0) {
    // The row: every operand must walk its trailing dims as one strided run.
    for (size_t k = 0; k < st.size(); ++k) {
      int64_t expect = -1;
      bool first = true;
      for (size_t d = full.size(); d-- > outer_n;) {
        if (full[d] == 1) continue;
        if (first) {
          row_st[k] = st[k][d];
          expect = st[k][d] * full[d];
          first = false;
        } else if (st[k][d] != expect) {
          return false;
        } else {
          expect = st[k][d] * full[d];
        }
      }
    }
    for (size_t d = outer_n; d < full.size(); ++d) row *= full[d];
  }
  int outer_rank = row_dims > 0 ? rank - 1 : rank;
  if (static_cast<int>(outer.size()) > outer_rank) return false;
  size_t pad = static_cast<size_t>(outer_rank) - outer.size();
  out->sizes.assign(pad, 1);
  out->sizes.insert(out->sizes.end(), outer.begin(), outer.end());
  if (row_dims > 0) out->sizes.push_back(row);
  if (out->sizes.empty()) out->sizes.push_back(1);
  out->strides.assign(operands.size(), {});
  for (size_t k = 0; k < operands.size(); ++k) {
    auto& s = out->strides[k];
    s.assign(pad, 0);
    s.insert(s.end(), outer_st[k].begin(), outer_st[k].end());
    if (row_dims > 0) s.push_back(row_st[k]);
    if (s.empty()) s.push_back(0);
  }
  return true;
}

InnerStride inner_class(int64_t stride) {
  return stride == 1 ? InnerStride::Contiguous : stride == 0 ? InnerStride::Broadcast : InnerStride::Strided;
}

bool inner_compatible(InnerStride kernel, int64_t stride, int64_t inner_size) {
  if (inner_size <= 1 || kernel == InnerStride::Strided) return true;
  return inner_class(stride) == kernel;
}

}  // namespace tcprof
