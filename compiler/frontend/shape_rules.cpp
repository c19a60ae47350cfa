#include "compiler/frontend/shape_rules.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <torch/csrc/jit/ir/ir.h>

namespace tcprof {
namespace {

using Sizes = std::vector<SymExprPtr>;

// Sizes of a tensor value: expressions for graph tensors, constants for parameters and buffers.
std::optional<Sizes> sizes_of(const VarPtr& v) {
  if (!v) return std::nullopt;
  if (v->kind == Var::Kind::Tensor) return v->sizes;
  if (v->kind == Var::Kind::Constant && v->value.isTensor()) {
    Sizes out;
    for (int64_t d : v->value.toTensor().sizes()) out.push_back(SymExpr::constant(d));
    return out;
  }
  return std::nullopt;
}

// An int argument as an expression: constants, or scalars derived from sizes.
SymExprPtr int_expr(const VarPtr& v) {
  if (!v) return nullptr;
  if (v->kind == Var::Kind::Scalar && v->expr) return v->expr;
  if (v->value.isInt()) return SymExpr::constant(v->value.toInt());
  return nullptr;
}

std::optional<std::vector<SymExprPtr>> int_list(const VarPtr& v) {
  std::vector<SymExprPtr> out;
  if (v->kind == Var::Kind::List) {
    for (const auto& item : v->items) {
      auto e = int_expr(item);
      if (!e) return std::nullopt;
      out.push_back(e);
    }
    return out;
  }
  if (v->value.isIntList()) {
    for (int64_t x : v->value.toIntList()) out.push_back(SymExpr::constant(x));
    return out;
  }
  return std::nullopt;
}

int64_t wrap_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

bool is_one(const SymExprPtr& e) { return e && e->op == SymOp::Const && e->value == 1; }

std::optional<Sizes> broadcast(const std::vector<VarPtr>& in) {
  Sizes out;
  for (const auto& v : in) {
    auto s = sizes_of(v);
    if (!s) continue;
    if (s->size() > out.size()) out.insert(out.begin(), s->size() - out.size(), SymExpr::constant(1));
    for (size_t i = 0; i < s->size(); ++i) {
      SymExprPtr& o = out[out.size() - s->size() + i];
      const SymExprPtr& d = (*s)[i];
      if (!d) return std::nullopt;
      if (is_one(o)) o = d;
    }
  }
  return out;
}

const std::unordered_set<std::string_view>& same_shape_ops() {
  static const std::unordered_set<std::string_view> ops = {
      "aten::relu", "aten::relu_", "aten::gelu", "aten::silu", "aten::sigmoid", "aten::tanh",
      "aten::exp", "aten::log", "aten::sqrt", "aten::rsqrt", "aten::neg", "aten::abs",
      "aten::softmax", "aten::log_softmax", "aten::dropout", "aten::dropout_", "aten::contiguous",
      "aten::clone", "aten::detach", "aten::to", "aten::type_as", "aten::layer_norm",
      "aten::batch_norm", "aten::group_norm", "aten::hardtanh", "aten::hardtanh_",
      "aten::hardswish", "aten::hardswish_", "aten::hardsigmoid", "aten::leaky_relu",
      "aten::elu", "aten::relu6", "aten::triu", "aten::tril", "aten::cos", "aten::sin",
      "aten::erf", "aten::reciprocal", "aten::square", "aten::zeros_like", "aten::ones_like",
      "aten::empty_like", "aten::rand_like", "aten::randn_like", "aten::full_like",
      "aten::float", "aten::half", "aten::masked_fill", "aten::masked_fill_", "aten::clamp",
      "aten::clamp_min", "aten::clamp_max", "aten::fill_", "aten::copy_", "aten::sign",
      "aten::cumsum", "aten::flip", "aten::roll", "aten::logical_not", "aten::bitwise_not",
  };
  return ops;
}

const std::unordered_set<std::string_view>& broadcast_ops() {
  static const std::unordered_set<std::string_view> ops = {
      "aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_",
      "aten::div", "aten::div_", "aten::pow", "aten::where", "aten::maximum", "aten::minimum",
      "aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge", "aten::rsub",
      "aten::logical_and", "aten::logical_or", "aten::__and__", "aten::__or__", "aten::lerp",
      "aten::addcmul", "aten::addcdiv", "aten::floor_divide", "aten::remainder", "aten::atan2",
  };
  return ops;
}

// What a shape rule sees: the op's inputs, the first one's sizes when it is a tensor, and the
// rank of the real output (to tell squeeze's two meanings apart).
struct RuleArgs {
  const std::vector<VarPtr>& in;
  const Sizes* x;  // null when input 0 is not a tensor with sizes
  size_t r;        // x's rank
  size_t rank_out;
  std::string_view op;
};
using ShapeRule = std::optional<Sizes> (*)(const RuleArgs&);

// Factories whose size is an argument.
std::optional<Sizes> factory_rule(const RuleArgs& a) {
  if (a.in.empty()) return std::nullopt;
  return int_list(a.in[0]);
}

// arange(end, ...) has 5 inputs, arange(start, end, ...) 6, arange(start, end, step, ...) 7.
std::optional<Sizes> arange_rule(const RuleArgs& a) {
  const auto& in = a.in;
  if (in.size() == 5) {
    if (auto end = int_expr(in[0])) return Sizes{end};
  }
  if (in.size() == 6 || (in.size() == 7 && in[2]->value.isInt() && in[2]->value.toInt() == 1)) {
    auto start = int_expr(in[0]), end = int_expr(in[1]);
    if (start && end) return Sizes{SymExpr::binary(SymOp::Sub, end, start)};
  }
  return std::nullopt;
}

std::optional<Sizes> linear_rule(const RuleArgs& a) {
  if (!a.x || a.in.size() < 2) return std::nullopt;
  auto w = sizes_of(a.in[1]);
  if (!w || w->size() != 2) return std::nullopt;
  Sizes out(a.x->begin(), a.x->end() - 1);
  out.push_back((*w)[0]);
  return out;
}

VarPtr tensor_with_sizes(Sizes sizes) {
  auto v = std::make_shared<Var>();
  v->kind = Var::Kind::Tensor;
  v->sizes = std::move(sizes);
  return v;
}

// Batch dims broadcast; the last two multiply as matrices.
std::optional<Sizes> matmul_rule(const RuleArgs& a) {
  if (!a.x || a.in.size() < 2) return std::nullopt;
  const Sizes& x = *a.x;
  auto y = sizes_of(a.in[1]);
  if (!y || a.r < 2 || y->size() < 2) return std::nullopt;
  auto batch = broadcast({tensor_with_sizes(Sizes(x.begin(), x.end() - 2)), tensor_with_sizes(Sizes(y->begin(), y->end() - 2))});
  if (!batch) return std::nullopt;
  batch->push_back(x[a.r - 2]);
  batch->push_back(y->back());
  return batch;
}

// view / reshape / expand: the requested sizes, with -1 resolved (numel over the other sizes, or
// for expand the source dim).
std::optional<Sizes> view_rule(const RuleArgs& a) {
  if (!a.x || a.in.size() < 2) return std::nullopt;
  auto sizes = int_list(a.in[1]);
  if (!sizes) return std::nullopt;
  for (size_t i = 0; i < sizes->size(); ++i) {
    auto& e = (*sizes)[i];
    if (e->op != SymOp::Const || e->value != -1) continue;
    if (a.op == "aten::expand") {
      size_t src = i + a.r - sizes->size();
      if (src >= a.r) return std::nullopt;
      e = (*a.x)[src];
      continue;
    }
    SymExprPtr numel = SymExpr::constant(1), known = SymExpr::constant(1);
    for (const auto& d : *a.x) {
      if (!d) return std::nullopt;
      numel = SymExpr::binary(SymOp::Mul, numel, d);
    }
    for (size_t j = 0; j < sizes->size(); ++j) {
      if (j != i) known = SymExpr::binary(SymOp::Mul, known, (*sizes)[j]);
    }
    e = SymExpr::binary(SymOp::FloorDiv, numel, known);
  }
  return sizes;
}

std::optional<Sizes> flatten_rule(const RuleArgs& a) {
  const auto& in = a.in;
  if (!a.x || in.size() < 3 || !in[1]->value.isInt() || !in[2]->value.isInt()) return std::nullopt;
  const Sizes& x = *a.x;
  int64_t s = wrap_dim(in[1]->value.toInt(), a.r), e = wrap_dim(in[2]->value.toInt(), a.r);
  Sizes out(x.begin(), x.begin() + s);
  SymExprPtr p = SymExpr::constant(1);
  for (int64_t i = s; i <= e; ++i) {
    const SymExprPtr& d = x[static_cast<size_t>(i)];
    if (!d) return std::nullopt;  // a size with no rule: the caller reads it from the value
    p = SymExpr::binary(SymOp::Mul, p, d);
  }
  out.push_back(p);
  out.insert(out.end(), x.begin() + e + 1, x.end());
  return out;
}

std::optional<Sizes> transpose_rule(const RuleArgs& a) {
  const auto& in = a.in;
  if (!a.x || in.size() < 3 || !in[1]->value.isInt() || !in[2]->value.isInt()) return std::nullopt;
  Sizes out = *a.x;
  std::swap(out[static_cast<size_t>(wrap_dim(in[1]->value.toInt(), a.r))],
            out[static_cast<size_t>(wrap_dim(in[2]->value.toInt(), a.r))]);
  return out;
}

std::optional<Sizes> t_rule(const RuleArgs& a) {
  if (!a.x || a.r != 2) return std::nullopt;
  return Sizes{(*a.x)[1], (*a.x)[0]};
}

std::optional<Sizes> permute_rule(const RuleArgs& a) {
  if (!a.x || a.in.size() < 2 || !a.in[1]->value.isIntList()) return std::nullopt;
  Sizes out;
  for (int64_t d : a.in[1]->value.toIntList()) out.push_back((*a.x)[static_cast<size_t>(wrap_dim(d, a.r))]);
  return out;
}

std::optional<Sizes> unsqueeze_rule(const RuleArgs& a) {
  if (!a.x || a.in.size() < 2 || !a.in[1]->value.isInt()) return std::nullopt;
  Sizes out = *a.x;
  out.insert(out.begin() + wrap_dim(a.in[1]->value.toInt(), a.r + 1), SymExpr::constant(1));
  return out;
}

// select / squeeze(dim): the dim goes (squeeze of a dim that is not 1 keeps it: the real
// output's rank tells).
std::optional<Sizes> drop_dim_rule(const RuleArgs& a) {
  if (!a.x || a.in.size() < 2 || !a.in[1]->value.isInt()) return std::nullopt;
  Sizes out = *a.x;
  out.erase(out.begin() + wrap_dim(a.in[1]->value.toInt(), a.r));
  if (a.rank_out == out.size()) return out;
  return std::nullopt;
}

// sum / mean / amax / amin over a dim list, with or without keepdim.
std::optional<Sizes> reduce_rule(const RuleArgs& a) {
  const auto& in = a.in;
  if (!a.x || in.size() < 3 || !in[1]->value.isIntList() || !in[2]->value.isBool()) return std::nullopt;
  Sizes out = *a.x;
  std::vector<int64_t> dims;
  for (int64_t d : in[1]->value.toIntList()) dims.push_back(wrap_dim(d, a.r));
  std::sort(dims.rbegin(), dims.rend());
  for (int64_t d : dims) {
    if (in[2]->value.toBool()) {
      out[static_cast<size_t>(d)] = SymExpr::constant(1);
    } else {
      out.erase(out.begin() + d);
    }
  }
  return out;
}

// slice(dim, start, end, 1) with non-negative bounds: min(end, size) - min(start, size).
std::optional<Sizes> slice_rule(const RuleArgs& a) {
  const auto& in = a.in;
  if (!a.x || in.size() < 5 || !in[1]->value.isInt()) return std::nullopt;
  auto start = int_expr(in[2]), end = int_expr(in[3]), step = int_expr(in[4]);
  if (!start || !end || !step || step->op != SymOp::Const || step->value != 1) return std::nullopt;
  if (start->op == SymOp::Const && start->value < 0) return std::nullopt;
  if (end->op == SymOp::Const && end->value < 0) return std::nullopt;
  size_t d = static_cast<size_t>(wrap_dim(in[1]->value.toInt(), a.r));
  const Sizes& x = *a.x;
  if (!x[d]) return std::nullopt;  // a size with no rule: read from the value instead
  Sizes out = x;
  SymExprPtr stop = SymExpr::binary(SymOp::Min, end, x[d]);
  SymExprPtr begin = SymExpr::binary(SymOp::Min, start, x[d]);
  out[d] = SymExpr::binary(SymOp::Sub, stop, begin);
  return out;
}

std::optional<Sizes> embedding_rule(const RuleArgs& a) {
  if (!a.x || a.in.size() < 2) return std::nullopt;
  auto idx = sizes_of(a.in[1]);
  if (!idx || a.r != 2) return std::nullopt;
  Sizes out = *idx;
  out.push_back((*a.x)[1]);
  return out;
}

// cat of a list along a dim: the other dims of the first item, the sum along the dim. Its input
// 0 is the list, so it never has sizes of its own.
std::optional<Sizes> cat_rule(const RuleArgs& a) {
  const auto& in = a.in;
  if (in.size() < 2 || in[0]->kind != Var::Kind::List || !in[1]->value.isInt()) return std::nullopt;
  const auto& items = in[0]->items;
  if (items.empty() || !sizes_of(items[0])) return std::nullopt;
  Sizes out = *sizes_of(items[0]);
  size_t d = static_cast<size_t>(wrap_dim(in[1]->value.toInt(), out.size()));
  for (size_t i = 1; i < items.size(); ++i) {
    auto s = sizes_of(items[i]);
    if (!s || s->size() != out.size()) return std::nullopt;
    out[d] = SymExpr::binary(SymOp::Add, out[d], (*s)[d]);
  }
  return out;
}

// The rules for ops whose output shape is not their first input's or the broadcast of their
// inputs, by op name: a new op is a row here.
const std::unordered_map<std::string_view, ShapeRule>& shape_rule_table() {
  static const std::unordered_map<std::string_view, ShapeRule> table = {
      {"aten::zeros", factory_rule},     {"aten::ones", factory_rule},       {"aten::empty", factory_rule},
      {"aten::full", factory_rule},      {"aten::rand", factory_rule},       {"aten::randn", factory_rule},
      {"aten::arange", arange_rule},     {"aten::linear", linear_rule},      {"aten::matmul", matmul_rule},
      {"aten::mm", matmul_rule},         {"aten::bmm", matmul_rule},         {"aten::view", view_rule},
      {"aten::reshape", view_rule},      {"aten::expand", view_rule},        {"aten::flatten", flatten_rule},
      {"aten::transpose", transpose_rule}, {"aten::t", t_rule},              {"aten::permute", permute_rule},
      {"aten::unsqueeze", unsqueeze_rule}, {"aten::select", drop_dim_rule},  {"aten::squeeze", drop_dim_rule},
      {"aten::sum", reduce_rule},        {"aten::mean", reduce_rule},        {"aten::amax", reduce_rule},
      {"aten::amin", reduce_rule},       {"aten::slice", slice_rule},        {"aten::embedding", embedding_rule},
      {"aten::cat", cat_rule},
  };
  return table;
}

std::optional<Sizes> rule(const torch::jit::Node* node, const std::vector<VarPtr>& in, size_t rank_out) {
  std::string_view op = node->kind().toQualString();
  std::optional<Sizes> x_sizes = in.empty() ? std::nullopt : sizes_of(in[0]);
  const Sizes* x = x_sizes ? &*x_sizes : nullptr;
  if (same_shape_ops().count(op) && x) return *x;
  if (broadcast_ops().count(op)) return broadcast(in);
  auto it = shape_rule_table().find(op);
  if (it == shape_rule_table().end()) return std::nullopt;
  // Factories take sizes from their arguments: only when input 0 is not a tensor.
  if (it->second == factory_rule && x) return std::nullopt;
  if (it->second == arange_rule && x) return std::nullopt;
  return it->second(RuleArgs{in, x, x ? x->size() : 0, rank_out, op});
}

}  // namespace

std::vector<SymExprPtr> output_sizes(const torch::jit::Node* node, const std::vector<VarPtr>& in,
                                     const at::Tensor& result, const SymBindings& bindings) {
  bool dynamic_in = false;
  for (const auto& v : in) {
    if (v->kind == Var::Kind::Tensor) {
      for (const auto& d : v->sizes) dynamic_in = dynamic_in || !d || d->dynamic;
    }
    if (v->kind == Var::Kind::Scalar && v->expr && v->expr->dynamic) dynamic_in = true;
    for (const auto& item : v->items) {
      if (item->kind == Var::Kind::Scalar && item->expr && item->expr->dynamic) dynamic_in = true;
      if (item->kind == Var::Kind::Tensor) {
        for (const auto& d : item->sizes) dynamic_in = dynamic_in || !d || d->dynamic;
      }
    }
  }
  const auto actual = result.sizes();
  std::vector<SymExprPtr> out;
  std::optional<Sizes> ruled;
  try {
    ruled = rule(node, in, actual.size());
  } catch (const std::exception&) {
    ruled.reset();
  }
  // A rule is only trusted when it reproduces the real sizes of this run.
  if (ruled && ruled->size() == actual.size()) {
    bool agrees = true;
    for (size_t i = 0; i < actual.size() && agrees; ++i) {
      try {
        agrees = (*ruled)[i] && evaluate(*(*ruled)[i], bindings) == actual[i];
      } catch (const std::exception&) {
        agrees = false;
      }
    }
    if (agrees) return *ruled;
  }
  for (int64_t s : actual) out.push_back(dynamic_in ? nullptr : SymExpr::constant(s));
  return out;
}

}  // namespace tcprof
