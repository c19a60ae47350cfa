#include "compiler/frontend/shape_rules.h"

#include <algorithm>
#include <optional>
#include <string_view>
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

std::optional<Sizes> rule(const torch::jit::Node* node, const std::vector<VarPtr>& in, size_t rank_out) {
  std::string_view op = node->kind().toQualString();
  std::optional<Sizes> x_sizes = in.empty() ? std::nullopt : sizes_of(in[0]);
  const Sizes* x = x_sizes ? &*x_sizes : nullptr;
  if (same_shape_ops().count(op) && x) return *x;
  if (broadcast_ops().count(op)) return broadcast(in);
  if (!x) {
    // Factories whose size is an argument.
    if ((op == "aten::zeros" || op == "aten::ones" || op == "aten::empty" || op == "aten::full" ||
         op == "aten::rand" || op == "aten::randn") && !in.empty()) {
      return int_list(in[0]);
    }
    if (op == "aten::arange") {
      // arange(end, ...) has 5 inputs, arange(start, end, ...) 6, arange(start, end, step, ...) 7.
      if (in.size() == 5) {
        if (auto end = int_expr(in[0])) return Sizes{end};
      }
      if (in.size() == 6 || (in.size() == 7 && in[2]->value.isInt() && in[2]->value.toInt() == 1)) {
        auto start = int_expr(in[0]), end = int_expr(in[1]);
        if (start && end) return Sizes{SymExpr::binary(SymOp::Sub, end, start)};
      }
    }
    return std::nullopt;
  }
  const size_t r = x->size();
  if (op == "aten::linear" && in.size() >= 2) {
    auto w = sizes_of(in[1]);
    if (!w || w->size() != 2) return std::nullopt;
    Sizes out(x->begin(), x->end() - 1);
    out.push_back((*w)[0]);
    return out;
  }
  if ((op == "aten::matmul" || op == "aten::mm" || op == "aten::bmm") && in.size() >= 2) {
    auto y = sizes_of(in[1]);
    if (!y || r < 2 || y->size() < 2) return std::nullopt;
    Sizes batch_x(x->begin(), x->end() - 2), batch_y(y->begin(), y->end() - 2);
    auto bx = std::make_shared<Var>();
    bx->kind = Var::Kind::Tensor;
    bx->sizes = batch_x;
    auto by = std::make_shared<Var>();
    by->kind = Var::Kind::Tensor;
    by->sizes = batch_y;
    auto batch = broadcast({bx, by});
    if (!batch) return std::nullopt;
    batch->push_back((*x)[r - 2]);
    batch->push_back(y->back());
    return batch;
  }
  if ((op == "aten::view" || op == "aten::reshape" || op == "aten::expand") && in.size() >= 2) {
    auto sizes = int_list(in[1]);
    if (!sizes) return std::nullopt;
    for (size_t i = 0; i < sizes->size(); ++i) {
      auto& e = (*sizes)[i];
      if (e->op == SymOp::Const && e->value == -1) {
        if (op == "aten::expand") {
          size_t src = i + r - sizes->size();
          if (src >= r) return std::nullopt;
          e = (*x)[src];
          continue;
        }
        // -1 is numel / (product of the other sizes).
        SymExprPtr numel = SymExpr::constant(1), known = SymExpr::constant(1);
        for (const auto& d : *x) {
          if (!d) return std::nullopt;
          numel = SymExpr::binary(SymOp::Mul, numel, d);
        }
        for (size_t j = 0; j < sizes->size(); ++j) {
          if (j != i) known = SymExpr::binary(SymOp::Mul, known, (*sizes)[j]);
        }
        e = SymExpr::binary(SymOp::FloorDiv, numel, known);
      }
    }
    return sizes;
  }
  if (op == "aten::flatten" && in.size() >= 3 && in[1]->value.isInt() && in[2]->value.isInt()) {
    int64_t s = wrap_dim(in[1]->value.toInt(), r), e = wrap_dim(in[2]->value.toInt(), r);
    Sizes out(x->begin(), x->begin() + s);
    SymExprPtr p = SymExpr::constant(1);
    for (int64_t i = s; i <= e; ++i) {
      const SymExprPtr& d = (*x)[static_cast<size_t>(i)];
      if (!d) return std::nullopt;  // a size with no rule: the caller reads it from the value
      p = SymExpr::binary(SymOp::Mul, p, d);
    }
    out.push_back(p);
    out.insert(out.end(), x->begin() + e + 1, x->end());
    return out;
  }
  if (op == "aten::transpose" && in.size() >= 3 && in[1]->value.isInt() && in[2]->value.isInt()) {
    Sizes out = *x;
    std::swap(out[static_cast<size_t>(wrap_dim(in[1]->value.toInt(), r))],
              out[static_cast<size_t>(wrap_dim(in[2]->value.toInt(), r))]);
    return out;
  }
  if (op == "aten::t" && r == 2) return Sizes{(*x)[1], (*x)[0]};
  if (op == "aten::permute" && in.size() >= 2 && in[1]->value.isIntList()) {
    Sizes out;
    for (int64_t d : in[1]->value.toIntList()) out.push_back((*x)[static_cast<size_t>(wrap_dim(d, r))]);
    return out;
  }
  if (op == "aten::unsqueeze" && in.size() >= 2 && in[1]->value.isInt()) {
    Sizes out = *x;
    int64_t d = wrap_dim(in[1]->value.toInt(), r + 1);
    out.insert(out.begin() + d, SymExpr::constant(1));
    return out;
  }
  if ((op == "aten::select" || op == "aten::squeeze") && in.size() >= 2 && in[1]->value.isInt()) {
    Sizes out = *x;
    out.erase(out.begin() + wrap_dim(in[1]->value.toInt(), r));
    if (rank_out == out.size()) return out;
    return std::nullopt;
  }
  if ((op == "aten::sum" || op == "aten::mean" || op == "aten::amax" || op == "aten::amin") &&
      in.size() >= 3 && in[1]->value.isIntList() && in[2]->value.isBool()) {
    Sizes out = *x;
    std::vector<int64_t> dims;
    for (int64_t d : in[1]->value.toIntList()) dims.push_back(wrap_dim(d, r));
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
  if (op == "aten::slice" && in.size() >= 5 && in[1]->value.isInt()) {
    auto start = int_expr(in[2]), end = int_expr(in[3]), step = int_expr(in[4]);
    if (!start || !end || !step || step->op != SymOp::Const || step->value != 1) return std::nullopt;
    if (start->op == SymOp::Const && start->value < 0) return std::nullopt;
    if (end->op == SymOp::Const && end->value < 0) return std::nullopt;
    size_t d = static_cast<size_t>(wrap_dim(in[1]->value.toInt(), r));
    Sizes out = *x;
    if (!(*x)[d]) return std::nullopt;  // a size with no rule: read from the value instead
    SymExprPtr stop = SymExpr::binary(SymOp::Min, end, (*x)[d]);
    SymExprPtr begin = SymExpr::binary(SymOp::Min, start, (*x)[d]);
    out[d] = SymExpr::binary(SymOp::Sub, stop, begin);
    return out;
  }
  if (op == "aten::embedding" && in.size() >= 2) {
    auto idx = sizes_of(in[1]);
    if (!idx || r != 2) return std::nullopt;
    Sizes out = *idx;
    out.push_back((*x)[1]);
    return out;
  }
  if (op == "aten::cat" && in.size() >= 2 && in[0]->kind == Var::Kind::List && in[1]->value.isInt()) {
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
  return std::nullopt;
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
