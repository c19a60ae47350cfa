#include "compiler/backends/cpp/lower/kernel_levels.h"

#include <algorithm>

namespace tcprof {

std::vector<int> KernelLevels::reductions_at(int L) const {
  std::vector<int> out;
  for (size_t n = 0; n < level.size(); ++n) {
    if (reduction[n] && level[n] == L) out.push_back(static_cast<int>(n));
  }
  return out;
}

KernelLevels kernel_levels(const Kernel& k) {
  const size_t n = k.nodes.size();
  KernelLevels out;
  out.uniform.assign(n, false);
  out.level.assign(n, 0);
  out.reduction.assign(n, false);
  if (k.kind != KernelKind::Row) return out;
  std::vector<int> dep(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const ExprNode& node = k.nodes[i];
    int d = 0;
    bool all_uniform = true;
    for (int a : node.args) {
      d = std::max(d, dep[static_cast<size_t>(a)]);
      all_uniform = all_uniform && out.uniform[static_cast<size_t>(a)];
    }
    if (is_reduction(node.op)) {
      out.uniform[i] = true;
      out.level[i] = d + 1;
      out.reduction[i] = true;
      out.max_level = std::max(out.max_level, out.level[i]);
    } else if (node.op == ExprOp::Const || node.op == ExprOp::RowLen) {
      out.uniform[i] = true;
    } else if (node.op == ExprOp::Load) {
      out.uniform[i] = k.inputs[static_cast<size_t>(node.input)].inner == InnerStride::Broadcast;
    } else {
      out.uniform[i] = all_uniform;
      out.level[i] = d;
    }
    dep[i] = out.uniform[i] ? out.level[i] : d;
  }
  return out;
}

std::vector<int> nodes_needed(const Kernel& k, const KernelLevels& levels, const std::vector<int>& roots,
                              const std::vector<bool>& defined, bool stop_at_uniform) {
  std::vector<bool> needed(k.nodes.size(), false);
  std::vector<int> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    size_t n = static_cast<size_t>(stack.back());
    stack.pop_back();
    if (needed[n] || defined[n]) continue;
    needed[n] = true;
    if (stop_at_uniform && levels.uniform[n]) continue;
    for (int a : k.nodes[n].args) stack.push_back(a);
  }
  std::vector<int> out;
  for (size_t n = 0; n < needed.size(); ++n) {
    if (needed[n]) out.push_back(static_cast<int>(n));
  }
  return out;
}

std::vector<int> uniform_leaves(const Kernel& k, const KernelLevels& levels, const std::vector<int>& roots,
                                const std::vector<bool>& defined) {
  std::vector<int> leaves;
  std::vector<bool> seen(k.nodes.size(), false);
  std::vector<int> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    size_t n = static_cast<size_t>(stack.back());
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = true;
    if (levels.uniform[n]) {
      if (!defined[n]) leaves.push_back(static_cast<int>(n));
      continue;
    }
    for (int a : k.nodes[n].args) stack.push_back(a);
  }
  return leaves;
}

bool is_softmax_denominator(const Kernel& k, int sum_node) {
  const ExprNode& sum = k.nodes[static_cast<size_t>(sum_node)];
  if (sum.op != ExprOp::ReduceSum) return false;
  const ExprNode& e = k.nodes[static_cast<size_t>(sum.args[0])];
  if (e.op != ExprOp::Exp) return false;
  const ExprNode& d = k.nodes[static_cast<size_t>(e.args[0])];
  return d.op == ExprOp::Sub && k.nodes[static_cast<size_t>(d.args[1])].op == ExprOp::ReduceMax;
}

bool sum_accumulates_in_double(const Kernel& k, int sum_node) {
  const ExprNode& n = k.nodes[static_cast<size_t>(sum_node)];
  return n.op == ExprOp::ReduceSum && n.type == ElemType::F32 && !is_softmax_denominator(k, sum_node);
}

std::vector<bool> outputs_divided_in_place(const Kernel& k, const KernelLevels& levels) {
  std::vector<bool> reuse(k.outputs.size(), false);
  for (size_t i = 0; i < k.outputs.size(); ++i) {
    const KernelOutput& o = k.outputs[i];
    const ExprNode& n = k.nodes[static_cast<size_t>(o.expr)];
    if (o.per_row || n.op != ExprOp::Div) continue;
    const ExprNode& d = k.nodes[static_cast<size_t>(n.args[1])];
    reuse[i] = d.op == ExprOp::ReduceSum && d.args[0] == n.args[0] &&
               levels.level[static_cast<size_t>(n.args[1])] == levels.max_level;
  }
  return reuse;
}

RowOutputRoots row_output_roots(const Kernel& k, const std::vector<bool>& divided_in_place) {
  RowOutputRoots r;
  for (size_t i = 0; i < k.outputs.size(); ++i) {
    const KernelOutput& o = k.outputs[i];
    if (o.per_row) r.per_row.push_back(o.expr);
    else if (divided_in_place[i]) r.divisors.push_back(k.nodes[static_cast<size_t>(o.expr)].args[1]);
    else r.element.push_back(o.expr);
  }
  return r;
}

}  // namespace tcprof
