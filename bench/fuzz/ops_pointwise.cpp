// The generator's pointwise ops: math, activations, powers, rounding, arithmetic with broadcast
// partners, comparisons and masks (see generator_ops.h).
#include <cmath>

#include <fmt/format.h>

#include "bench/fuzz/generator_ops.h"

namespace tcprof::fuzz {
namespace {

std::optional<Var> binary_result(const Var& s, const Operand& y, ST dtype, double bound, bool exact) {
  Var v = like(s, dtype, bound, exact);
  if (!y.number) {
    auto shape = broadcast(s.shape, y.shape);
    if (!shape) return std::nullopt;
    v.shape = *shape;
    v.contiguous = s.contiguous && y.contiguous;
  }
  return v;
}

Operand mask_for(GeneratorState& g, const Var& s, bool fit_into) {
  PartnerRequest rq;
  rq.only_bool = true;
  rq.allow_number = false;
  rq.fit_into = fit_into;
  return g.partner(s, rq);
}

// What a square root adds to |x| (GeneratorOptions::differentiable).
const char* sqrt_guard(const GeneratorState& g) { return g.options().differentiable ? " + 0.001" : ""; }

}  // namespace

// ---- pointwise math -------------------------------------------------------------------------

bool op_unary_neg(GeneratorState& g, int si) {
  const Var s = var(g, si);
  return emit(g, "torch.neg(" + s.name + ")", like(s, s.dtype, s.bound, s.exact), "neg", {si});
}

bool op_unary(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  const std::string& x = s.name;
  const ST f = is_float(s.dtype) ? s.dtype : ST::Float;  // float math on ints: the default dtype
  const double b = s.bound;
  auto call = [&](const char* fn, double bound, const char* label) {
    return emit(g, fmt::format("torch.{}({})", fn, x), like(s, f, bound, false), label, {si});
  };
  switch (g.pick(12)) {
    case 0: return emit(g, g.chance(0.5) ? "-" + x : "torch.neg(" + x + ")", like(s, s.dtype, b, s.exact), "neg", {si});
    case 1: return emit(g, g.chance(0.5) ? "torch.abs(" + x + ")" : x + ".abs()", like(s, s.dtype, b, s.exact), "abs", {si});
    case 2: return b <= 9 && call("exp", std::exp(b), "exp");
    case 3: return emit(g, fmt::format("torch.log(torch.abs({}) + 1)", x), like(s, f, std::log1p(b) + 1, false), "log", {si});
    case 4:
      if (!g.options().known_bug_patterns && s.erf_error) return false;  // FuzzBugs.DISABLED_ErfLoses...
      return emit(g, fmt::format("torch.sqrt(torch.abs({}){})", x, sqrt_guard(g)), like(s, f, std::sqrt(b) + 1, false), "sqrt", {si});
    case 5: return emit(g, fmt::format("torch.rsqrt(torch.abs({}) + 1)", x), like(s, f, 1, false), "rsqrt", {si});
    case 6: return call("tanh", 1, "tanh");
    case 7: {
      Var v = like(s, f, 1, false);
      v.erf_error = true;
      return emit(g, fmt::format("torch.erf({})", x), v, "erf", {si});
    }
    case 8: return call("sigmoid", 1, "sigmoid");
    case 9: return call("sin", 1, "sin");
    case 10: return call("cos", 1, "cos");
    default:
      return emit(g, fmt::format("torch.reciprocal(torch.abs({}) + 1)", x), like(s, f, 1, false), "reciprocal", {si});
  }
}

bool op_activation(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  const bool fl = is_float(s.dtype);
  const std::string& x = s.name;
  const double b = s.bound;
  switch (g.pick(8)) {
    case 0: return emit(g, g.chance(0.5) ? "torch.relu(" + x + ")" : x + ".relu()", like(s, s.dtype, b, s.exact), "relu", {si});
    case 1: return fl && emit(g, "torch.relu6(" + x + ")", like(s, s.dtype, std::min(b, 6.0), s.exact), "relu6", {si});
    case 2: {
      if (!fl) return false;
      auto [lo, hi] = g.choose<std::pair<double, double>>({{-1, 1}, {-0.5, 2}, {0, 6}, {-2.5, 0.5}});
      std::string e = lo == -1 && hi == 1 && g.chance(0.5)
                          ? fmt::format("torch.hardtanh({})", x)
                          : fmt::format("torch.hardtanh({}, {}, {})", x, float_literal(lo), float_literal(hi));
      return emit(g, e, like(s, s.dtype, std::max(-lo, hi), s.exact), "hardtanh", {si});
    }
    case 3: {
      auto [lo, hi] = g.choose<std::pair<double, double>>({{-1, 1}, {-0.5, 2}, {0, 3}, {-2, 0}});
      auto lit = [&](double v) { return fl ? float_literal(v) : std::to_string(static_cast<int>(v)); };
      std::string e;
      switch (g.pick(5)) {
        case 0: e = fmt::format("torch.clamp({}, {}, {})", x, lit(lo), lit(hi)); break;
        case 1: e = fmt::format("torch.clamp({}, min={})", x, lit(lo)); hi = b; break;
        case 2: e = fmt::format("{}.clamp(max={})", x, lit(hi)); lo = -b; break;
        case 3: e = fmt::format("torch.clamp_min({}, {})", x, lit(lo)); hi = b; break;
        default: e = fmt::format("torch.clamp_max({}, {})", x, lit(hi)); lo = -b; break;
      }
      return emit(g, e, like(s, s.dtype, std::max(std::fabs(lo), std::fabs(hi)), s.exact), "clamp", {si});
    }
    case 4: return fl && emit(g, "torch.hardswish(" + x + ")", like(s, s.dtype, b + 1, false), "hardswish", {si});
    case 5: return fl && emit(g, "torch.hardsigmoid(" + x + ")", like(s, s.dtype, 1, false), "hardsigmoid", {si});
    case 6: return fl && emit(g, "torch.silu(" + x + ")", like(s, s.dtype, b + 1, false), "silu", {si});
    default: {
      if (!fl) return false;
      int mode = g.pick(3);
      std::string e = mode == 0 ? fmt::format("torch.gelu({})", x)
                                : fmt::format("torch.gelu({}, approximate='{}')", x, mode == 1 ? "tanh" : "none");
      return emit(g, e, like(s, s.dtype, b + 1, false), mode == 1 ? "gelu_tanh" : "gelu", {si});
    }
  }
}

bool op_pow(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  const std::string& x = s.name;
  const double b = s.bound;
  if (is_int(s.dtype)) {  // integer powers stay integers
    int p = g.choose<int>({2, 3});
    std::string e = g.chance(0.5) ? fmt::format("torch.pow({}, {})", x, p) : fmt::format("{} ** {}", x, p);
    return emit(g, e, like(s, s.dtype, std::pow(b, p), true), "pow", {si});
  }
  switch (g.pick(5)) {
    case 0: {
      if (b > 100) return false;
      std::string e = g.choose<std::string>({"torch.pow({}, 2)", "{} ** 2", "{}.pow(2)"});
      return emit(g, fmt::format(fmt::runtime(e), x), like(s, s.dtype, b * b, false), "pow", {si});
    }
    case 1:
      if (b > 20) return false;
      return emit(g, fmt::format(fmt::runtime(g.chance(0.5) ? "torch.pow({}, 3)" : "{} ** 3"), x), like(s, s.dtype, b * b * b, false), "pow", {si});
    case 2:
      if (!g.options().known_bug_patterns && s.erf_error) return false;
      return emit(g, fmt::format("torch.pow(torch.abs({}){}, 0.5)", x, sqrt_guard(g)), like(s, s.dtype, std::sqrt(b) + 1, false), "pow", {si});
    case 3: return emit(g, fmt::format("torch.pow(torch.abs({}) + 1, -1)", x), like(s, s.dtype, 1, false), "pow", {si});
    default:
      if (b > 200) return false;
      return emit(g, fmt::format("torch.pow(torch.abs({}), 1.7)", x), like(s, s.dtype, std::pow(b, 1.7) + 1, false), "pow", {si});
  }
}

// floor / ceil / round are discontinuous: only on exactly computed values.
bool op_rounding(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (!is_float(s.dtype) || !s.exact) return false;
  std::string fn = g.choose<std::string>({"floor", "ceil", "round"});
  std::string e = g.chance(0.5) ? fmt::format("torch.{}({})", fn, s.name) : fmt::format("{}.{}()", s.name, fn);
  return emit(g, e, like(s, s.dtype, s.bound + 1, true), fn, {si});
}

// ---- binary ops -----------------------------------------------------------------------------

bool op_arith(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  const int which = g.pick(3);  // add, sub, mul
  PartnerRequest rq;
  rq.allow_bool = which == 2;
  const Operand y = g.partner(s, rq);
  const ST out = result_type({{s.dtype, s.shape.empty() ? Participant::Kind::ZeroDim : Participant::Kind::Dimensioned},
                              y.participant()});
  if (out == ST::Bool) return false;
  const std::string& x = s.name;
  std::string alpha;
  double alpha_value = 1;
  if (which < 2 && !y.number && g.chance(0.3)) {
    alpha_value = is_float(out) ? g.choose<double>({2.0, 0.5, -1.5}) : g.choose<double>({2, -1, 3});
    alpha = is_float(out) ? float_literal(alpha_value) : std::to_string(static_cast<int>(alpha_value));
  }
  std::string e;
  double bound;
  bool exact = !is_float(out);
  if (which == 0) {
    e = !alpha.empty() ? fmt::format(fmt::runtime(g.chance(0.5) ? "torch.add({}, {}, alpha={})" : "{}.add({}, alpha={})"), x, y.text, alpha)
        : g.chance(0.6) ? fmt::format("{} + {}", x, y.text)
        : g.chance(0.5) ? fmt::format("{} + {}", y.text, x)
                         : fmt::format("torch.add({}, {})", x, y.text);
    bound = s.bound + std::fabs(alpha_value) * y.bound;
  } else if (which == 1) {
    e = !alpha.empty() ? fmt::format("torch.sub({}, {}, alpha={})", x, y.text, alpha)
        : g.chance(0.7) ? fmt::format("{} - {}", x, y.text)
                         : fmt::format("torch.sub({}, {})", x, y.text);
    bound = s.bound + std::fabs(alpha_value) * y.bound;
  } else {
    e = g.chance(0.6) ? fmt::format("{} * {}", x, y.text)
        : g.chance(0.5) ? fmt::format("{} * {}", y.text, x)
                         : fmt::format("torch.mul({}, {})", x, y.text);
    bound = s.bound * (y.dtype == ST::Bool ? 1 : y.bound);
    // A mask or a power of two scales without rounding.
    exact = exact || (s.exact && (y.dtype == ST::Bool || (y.number && power_of_two(y.bound))));
  }
  auto v = binary_result(s, y, out, bound, exact);
  return v && emit(g, e, *v, which == 0 ? "add" : which == 1 ? "sub" : "mul", reads_of(si, y));
}

bool op_div(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  const std::string& x = s.name;
  auto as_float = [](ST t) { return is_float(t) ? t : ST::Float; };  // true division
  const Participant sp = participant_of(s);
  switch (g.weighted({5, 4, 1})) {
    case 0: {  // a denominator kept away from 0
      PartnerRequest rq;
      rq.allow_number = false;
      Operand y = g.partner(s, rq);
      Participant yp = y.participant();
      yp.dtype = as_float(y.dtype);
      auto v = binary_result(s, y, as_float(result_type({sp, yp})), 2 * s.bound, false);
      return v && emit(g, fmt::format("{} / (torch.abs({}) + 0.5)", x, y.text), *v, "div", reads_of(si, y));
    }
    case 1: {
      double d = g.choose<double>({2.0, 4.0, -0.5, 3.0, 7.0});
      std::string e = g.chance(0.5) ? fmt::format("{} / {}", x, float_literal(d)) : fmt::format("torch.div({}, {})", x, float_literal(d));
      return emit(g, e, like(s, as_float(s.dtype), s.bound / std::fabs(d), s.exact && power_of_two(d)), "div", {si});
    }
    default: {  // any denominator: infinities and NaN from 0, huge values from tiny ones
      PartnerRequest rq;
      rq.allow_number = false;
      Operand y = g.partner(s, rq);
      // Except one computed through a layer norm: a sum of a normalised row is exactly 0 only in
      // exact arithmetic, rounding noise in any program, so whether x / y is NaN there is decided
      // by rounding (fuzz case 84658191899404: v10 / v10, eager 1, compiled the exact 0 / 0).
      if (y.var >= 0 && var(g, y.var).dependence == Dependence::Normalization) {
        Participant yp = y.participant();
        yp.dtype = as_float(y.dtype);
        auto v = binary_result(s, y, as_float(result_type({sp, yp})), 2 * s.bound, false);
        return v && emit(g, fmt::format("{} / (torch.abs({}) + 0.5)", x, y.text), *v, "div", reads_of(si, y));
      }
      auto v = binary_result(s, y, as_float(result_type({sp, y.participant()})), kFloatCap, false);
      return v && emit(g, fmt::format(fmt::runtime(g.chance(0.5) ? "{} / {}" : "torch.div({}, {})"), x, y.text), *v, "div", reads_of(si, y));
    }
  }
}

bool op_rsub(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  const Participant sp = participant_of(s);
  if (g.chance(0.6)) {
    PartnerRequest rq;
    Operand n = g.number_for(s, rq);
    ST out = result_type({sp, n.participant()});
    std::string e = g.chance(0.5) ? fmt::format("{} - {}", n.text, s.name) : fmt::format("torch.rsub({}, {})", s.name, n.text);
    return emit(g, e, like(s, out, s.bound + n.bound, !is_float(out)), "rsub", {si});
  }
  PartnerRequest rq;
  rq.allow_number = false;
  Operand y = g.partner(s, rq);
  ST out = result_type({sp, y.participant()});
  auto v = binary_result(s, y, out, s.bound + y.bound, !is_float(out));
  return v && emit(g, fmt::format("torch.rsub({}, {})", s.name, y.text), *v, "rsub", reads_of(si, y));
}

bool op_max_min(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  PartnerRequest rq;
  rq.allow_number = false;
  Operand y = g.partner(s, rq);
  const Participant sp = participant_of(s);
  auto v = binary_result(s, y, result_type({sp, y.participant()}), std::max(s.bound, y.bound), s.exact && y.exact);
  bool max = g.chance(0.5);
  std::string fn = max ? "maximum" : "minimum";
  std::string e = g.chance(0.7) ? fmt::format("torch.{}({}, {})", fn, s.name, y.text) : fmt::format("{}.{}({})", s.name, fn, y.text);
  return v && emit(g, e, *v, fn, reads_of(si, y));
}

// Comparisons read exact values only (graph_generator.h).
bool op_compare(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (!s.exact) return false;
  PartnerRequest rq;
  rq.require_exact = true;
  const bool boolean = s.dtype == ST::Bool;
  if (boolean) {
    rq.only_bool = true;
    rq.allow_number = false;
  }
  Operand y = g.partner(s, rq);
  static const std::vector<std::pair<std::string, std::string>> ops = {
      {">", "gt"}, {"<", "lt"}, {">=", "ge"}, {"<=", "le"}, {"==", "eq"}, {"!=", "ne"}};
  const auto& [infix, fn] = boolean ? ops[static_cast<size_t>(4 + g.pick(2))] : g.choose(ops);
  std::string e = g.chance(0.6) ? fmt::format("{} {} {}", s.name, infix, y.text)
                  : g.chance(0.5) ? fmt::format("torch.{}({}, {})", fn, s.name, y.text)
                                   : fmt::format("{}.{}({})", s.name, fn, y.text);
  auto v = binary_result(s, y, ST::Bool, 1, true);
  return v && emit(g, e, *v, fn, reads_of(si, y));
}

bool op_where(GeneratorState& g, int si) {
  const Var s = var(g, si);
  Operand cond = mask_for(g, s, false);
  PartnerRequest rq;
  if (s.dtype == ST::Bool) {
    rq.only_bool = true;
    rq.allow_number = false;
  }
  rq.float_number = is_float(s.dtype);  // a number of the subject's kind (where's promotion of numbers changed after 1.13)
  Operand y = g.partner(s, rq);
  auto shape = broadcast(s.shape, cond.shape);
  if (shape && !y.number) shape = broadcast(*shape, y.shape);
  if (!shape) return false;
  const Participant sp = participant_of(s);
  Var v = like(s, y.number ? s.dtype : result_type({sp, y.participant()}), std::max(s.bound, y.bound), s.exact && y.exact);
  v.shape = *shape;
  v.contiguous = s.contiguous && cond.contiguous && (y.number || y.contiguous);
  std::string e = !y.number && g.chance(0.3) ? fmt::format("torch.where({}, {}, {})", cond.text, y.text, s.name)
                                              : fmt::format("torch.where({}, {}, {})", cond.text, s.name, y.text);
  std::vector<int> reads = reads_of(si, y);
  if (cond.var >= 0) reads.push_back(cond.var);
  return emit(g, e, v, "where", reads);
}

bool op_masked_fill(GeneratorState& g, int si) {
  const Var s = var(g, si);
  Operand mask = mask_for(g, s, true);
  std::string value;
  double bound = s.bound;
  if (is_float(s.dtype)) {
    auto [text, b] = g.choose<std::pair<std::string, double>>(
        {{"0.0", 0}, {"-1.0", 1}, {"2.5", 2.5}, {"float('-inf')", 0}, {"-10000.0", 1e4}});
    value = text;
    bound = std::max(bound, b);
  } else if (is_int(s.dtype)) {
    value = g.choose<std::string>({"0", "-1", "7"});
    bound = std::max(bound, 7.0);
  } else {
    value = g.chance(0.5) ? "1" : "0";  // TorchScript numbers are int or float, not bool
  }
  std::string e = g.chance(0.6) ? fmt::format("{}.masked_fill({}, {})", s.name, mask.text, value)
                                 : fmt::format("torch.masked_fill({}, {}, {})", s.name, mask.text, value);
  Var v = like(s, s.dtype, bound, s.exact);
  v.contiguous = s.contiguous && mask.contiguous;
  return emit(g, e, v, "masked_fill", reads_of(si, mask));
}

bool op_logical_not(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype != ST::Bool) return false;
  int form = g.weighted({5, 3, 2});  // ~ is bitwise_not: not lowered, a LibTorch call between kernels
  std::string e = form == 0 ? "torch.logical_not(" + s.name + ")" : form == 1 ? s.name + ".logical_not()" : "~" + s.name;
  return emit(g, e, like(s, ST::Bool, 1, s.exact), form == 2 ? "bitwise_not" : "logical_not", {si});
}

bool op_mul_mask(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (s.dtype == ST::Bool) return false;
  Operand m = mask_for(g, s, g.chance(0.5));
  const Participant sp = participant_of(s);
  auto v = binary_result(s, m, result_type({sp, m.participant()}), s.bound, s.exact);
  std::string e = g.chance(0.5) ? fmt::format("{} * {}", s.name, m.text) : fmt::format("{} * {}", m.text, s.name);
  return v && emit(g, e, *v, "mul_mask", reads_of(si, m));
}

}  // namespace tcprof::fuzz
