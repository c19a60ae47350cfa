#include "bench/fuzz/generator_state.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tcprof::fuzz {

bool same_dim(const Dim& a, const Dim& b) { return a.sym == b.sym && (a.sym != 0 || a.size == b.size); }

bool same_shape(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_dim(a[i], b[i])) return false;
  }
  return true;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  auto is_one = [](const Dim& d) { return d.sym == 0 && d.size == 1; };
  for (size_t i = 0; i < r; ++i) {
    const Dim* x = i + a.size() < r ? nullptr : &a[i + a.size() - r];
    const Dim* y = i + b.size() < r ? nullptr : &b[i + b.size() - r];
    if (!x) out[i] = *y;
    else if (!y || same_dim(*x, *y) || is_one(*y)) out[i] = *x;
    else if (is_one(*x)) out[i] = *y;
    else return std::nullopt;
  }
  return out;
}

int64_t numel_estimate(const Shape& s) {
  int64_t n = 1;
  for (const auto& d : s) n *= d.sym == 0 ? d.size : std::max<int64_t>(d.size, 12) * (d.sym == 1 ? 1 : 4);
  return n;
}

bool is_float(ST t) { return t == ST::Float || t == ST::Double; }
bool is_int(ST t) { return t == ST::Int || t == ST::Long; }

namespace {

// ATen's promoteTypes restricted to the dtypes generated here: bool < i32 < i64 < f32 < f64.
int rank_of(ST t) {
  switch (t) {
    case ST::Bool: return 0;
    case ST::Int: return 1;
    case ST::Long: return 2;
    case ST::Float: return 3;
    case ST::Double: return 4;
    default: return -1;
  }
}
ST promote(ST a, ST b) {
  if (a == ST::Undefined) return b;
  if (b == ST::Undefined) return a;
  return rank_of(a) >= rank_of(b) ? a : b;
}
// ATen's combine_categories: a higher category from 0-dim tensors or numbers wins over the
// dimensioned tensors' type, but within one category the dimensioned tensors decide.
ST combine(ST higher, ST lower) {
  if (is_float(higher)) return higher;
  if (higher == ST::Bool || is_float(lower)) return promote(higher, lower);
  if (higher != ST::Undefined) return higher;
  return lower;
}

}  // namespace

ST result_type(const std::vector<Participant>& ps) {
  ST dimensioned = ST::Undefined, zero_dim = ST::Undefined, number = ST::Undefined;
  for (const auto& p : ps) {
    switch (p.kind) {
      case Participant::Kind::Dimensioned: dimensioned = promote(dimensioned, p.dtype); break;
      case Participant::Kind::ZeroDim: zero_dim = promote(zero_dim, p.dtype); break;
      case Participant::Kind::Number: number = promote(number, is_float(p.dtype) ? ST::Float : p.dtype); break;
    }
  }
  return combine(dimensioned, combine(zero_dim, number));
}

Participant Operand::participant() const {
  if (number) return {dtype, Participant::Kind::Number};
  return {dtype, shape.empty() ? Participant::Kind::ZeroDim : Participant::Kind::Dimensioned};
}

Operand operand_of(const std::vector<Var>& vars, int index) {
  const Var& v = vars[static_cast<size_t>(index)];
  Operand o;
  o.text = v.name;
  o.shape = v.shape;
  o.dtype = v.dtype;
  o.bound = v.bound;
  o.exact = v.exact;
  o.contiguous = v.contiguous;
  o.var = index;
  return o;
}

std::string float_literal(double v) {
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

GeneratorState::GeneratorState(uint64_t seed, const GeneratorOptions& options) : rng_(seed), options_(options) {
  case_.seed = seed;
  case_.known_bug_patterns = options.known_bug_patterns;
}

int GeneratorState::pick(int n) { return n <= 1 ? 0 : std::uniform_int_distribution<int>(0, n - 1)(rng_); }
bool GeneratorState::chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
int GeneratorState::weighted(const std::vector<int>& weights) {
  int total = 0;
  for (int w : weights) total += w;
  int r = pick(total);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (r < weights[i]) return static_cast<int>(i);
    r -= weights[i];
  }
  return 0;
}

int GeneratorState::add_var(Var v) {
  vars_.push_back(std::move(v));
  return static_cast<int>(vars_.size()) - 1;
}

void GeneratorState::add_statement(const std::string& line) { lines_.push_back(line); }

int GeneratorState::new_input(Shape shape, ST dtype) {
  for (auto& d : shape) {
    if (d.sym > 1) d = Dim{1, 0};  // a size derived from the dynamic one cannot be an input's
  }
  TensorRecipe r;
  r.dtype = dtype;
  for (size_t i = 0; i < shape.size(); ++i) {
    r.sizes.push_back(shape[i].size);
    if (shape[i].sym == 1) r.dynamic_dims.push_back(static_cast<int>(i));
  }
  const int rank = static_cast<int>(shape.size());
  if (rank > 0) {
    r.layout = static_cast<Layout>(weighted({50, rank >= 2 ? 12 : 0, 14, 10, 14}));
    r.dim = pick(rank);
  }
  if (is_float(dtype)) {
    r.scale = choose<double>({1, 1, 1, 1, 3, 0.05});
    r.specials = specials;
  } else if (is_int(dtype)) {
    r.scale = 5;
  }
  r.seed = rng_();
  Var v;
  v.name = fmt::format("x{}", case_.inputs.size());
  v.shape = std::move(shape);
  v.dtype = dtype;
  v.bound = is_float(dtype) ? kNormalBound * r.scale : is_int(dtype) ? r.scale : 1;
  v.contiguous = r.layout == Layout::Contiguous;
  v.overlapping = r.layout == Layout::Broadcast;
  v.storage = static_cast<int>(storage_epoch_.size());
  storage_epoch_.push_back(0);
  storage_ambiguous_.push_back(false);
  storage_repeated_.push_back(false);
  case_.inputs.push_back(r);
  return add_var(std::move(v));
}

int GeneratorState::new_param(Shape shape, ST dtype, bool buffer, double min_abs) {
  ParamSpec p;
  p.name = fmt::format("p{}", next_param_++);
  p.buffer = buffer || !is_float(dtype);  // parameters are float
  p.recipe.dtype = dtype;
  for (auto& d : shape) {
    if (d.sym != 0) d = Dim{1, 0};  // parameters have fixed sizes
    p.recipe.sizes.push_back(d.size);
  }
  p.recipe.scale = is_int(dtype) ? 5 : 1;
  p.recipe.min_abs = min_abs;
  p.recipe.seed = rng_();
  Var v;
  v.name = "self." + p.name;
  v.shape = std::move(shape);
  v.dtype = dtype;
  v.bound = is_float(dtype) ? kNormalBound + std::max(0.0, min_abs) : is_int(dtype) ? 5 : 1;
  v.contiguous = true;
  v.constant = true;
  v.storage = static_cast<int>(storage_epoch_.size());
  storage_epoch_.push_back(0);
  storage_ambiguous_.push_back(false);
  storage_repeated_.push_back(false);
  case_.params.push_back(std::move(p));
  return add_var(std::move(v));
}

Operand GeneratorState::number_for(const Var& subject, const PartnerRequest& rq) {
  bool as_float = rq.float_number && !rq.int_only && (is_float(subject.dtype) || chance(0.25));
  Operand o;
  o.number = true;
  if (as_float) {
    double v = choose<double>({0.5, 2.0, -1.5, 3.0, 0.25, -0.75, 1.25});
    o.text = float_literal(v);
    o.dtype = ST::Double;
    o.bound = std::fabs(v);
  } else {
    int v = choose<int>({1, 2, 3, -1, -2, 4});
    o.text = std::to_string(v);
    o.dtype = ST::Long;
    o.bound = std::abs(v);
  }
  return o;
}

bool GeneratorState::dtype_ok(ST t, const PartnerRequest& rq) const {
  if (rq.only_bool) return t == ST::Bool;
  if (t == ST::Bool) return rq.allow_bool;
  if (rq.int_only) return is_int(t);
  return true;
}

ST GeneratorState::partner_dtype(const Var& subject, const PartnerRequest& rq) {
  if (rq.only_bool) return ST::Bool;
  if (dtype_ok(subject.dtype, rq) && chance(0.8)) return subject.dtype;
  std::vector<ST> options;
  for (ST t : {ST::Float, ST::Double, ST::Int, ST::Long, ST::Bool}) {
    if (dtype_ok(t, rq)) options.push_back(t);
  }
  return choose(options);
}

Shape GeneratorState::partner_shape(const Shape& s, bool fit_into) {
  const int r = static_cast<int>(s.size());
  bool has_one = std::any_of(s.begin(), s.end(), [](const Dim& d) { return d.sym == 0 && d.size == 1; });
  switch (weighted({4, r >= 1 ? 3 : 0, r >= 1 ? 3 : 0, 1, r >= 1 || !fit_into ? 1 : 0, !fit_into && r < 4 ? 1 : 0,
                    !fit_into && has_one ? 2 : 0})) {
    case 0: return s;                                                          // same shape
    case 1: return Shape(s.begin() + 1 + pick(r), s.end());                    // a suffix: [C], [T,C], []
    case 2: {                                                                  // some dims 1: [T,1], [1,T,C]
      Shape out = s;
      for (auto& d : out) {
        if (chance(0.5)) d = Dim{1, 0};
      }
      return out;
    }
    case 3: return {};                                                         // a 0-dim tensor
    case 4: return {Dim{1, 0}};
    case 5: {                                                                  // one more leading dim
      Shape out = {Dim{choose<int64_t>({2, 3}), 0}};
      out.insert(out.end(), s.begin(), s.end());
      return out;
    }
    default: {                                                                 // grows a size-1 dim
      Shape out = s;
      for (auto& d : out) {
        if (d.sym == 0 && d.size == 1) d.size = choose<int64_t>({2, 3, 4});
      }
      return out;
    }
  }
}

Operand GeneratorState::partner(const Var& s, const PartnerRequest& rq) {
  if (chance(0.35)) {  // a value the graph already has
    std::vector<int> ok;
    for (size_t i = 0; i < vars_.size(); ++i) {
      const Var& v = vars_[i];
      if (!dtype_ok(v.dtype, rq) || (rq.require_exact && !v.exact) || v.storage == rq.exclude_storage) continue;
      auto b = broadcast(s.shape, v.shape);
      if (!b || (rq.fit_into && !same_shape(*b, s.shape))) continue;
      ok.push_back(static_cast<int>(i));
    }
    if (!ok.empty()) return operand_of(vars_, choose(ok));
  }
  if (rq.allow_number && !rq.only_bool && chance(0.25)) return number_for(s, rq);
  Shape shape = partner_shape(s.shape, rq.fit_into);
  ST dtype = partner_dtype(s, rq);
  if (chance(0.2)) return operand_of(vars_, new_param(shape, dtype, chance(0.4)));
  return operand_of(vars_, new_input(shape, dtype));
}

int GeneratorState::emit_compute(const std::string& expr, Var v, const std::string& label, const std::vector<int>& reads) {
  v.name = fresh_name();
  v.storage = static_cast<int>(storage_epoch_.size());
  storage_epoch_.push_back(0);
  storage_ambiguous_.push_back(false);
  storage_repeated_.push_back(false);
  v.writable = true;
  v.overlapping = false;
  v.compute = true;
  v.constant = !reads.empty();
  for (int r : reads) {
    v.constant = v.constant && vars_[static_cast<size_t>(r)].constant;
    v.dependence = std::max(v.dependence, vars_[static_cast<size_t>(r)].dependence);
    v.erf_error = v.erf_error || vars_[static_cast<size_t>(r)].erf_error;
  }
  Statement st{expr, label, -1, false, reads, {}};
  for (int r : reads) st.epochs.push_back(storage_epoch_[static_cast<size_t>(vars_[static_cast<size_t>(r)].storage)]);
  add_statement(v.name + " = " + expr);
  st.result = add_var(std::move(v));
  statements_.push_back(st);
  case_.ops.push_back(label);
  return st.result;
}

int GeneratorState::emit_view(const std::string& expr, Var v, const std::string& label, int of, bool ambiguous) {
  const Var& src = vars_[static_cast<size_t>(of)];
  v.name = fresh_name();
  v.storage = src.storage;
  v.overlapping = v.overlapping || src.overlapping;
  v.writable = src.writable && !v.overlapping;
  v.compute = false;
  v.constant = src.constant;
  v.dependence = src.dependence;
  v.erf_error = src.erf_error;
  if (ambiguous) storage_ambiguous_[static_cast<size_t>(src.storage)] = true;
  Statement st{expr, label, -1, true, {of}, {storage_epoch_[static_cast<size_t>(src.storage)]}};
  add_statement(v.name + " = " + expr);
  st.result = add_var(std::move(v));
  statements_.push_back(st);
  case_.ops.push_back(label);
  return st.result;
}

int GeneratorState::emit_mutation(const std::string& expr, int target, double bound, bool exact, const std::string& label,
                                  bool bind, Dependence reads) {
  const int storage = vars_[static_cast<size_t>(target)].storage;
  for (auto& v : vars_) {
    if (v.storage != storage) continue;
    v.bound = std::max(v.bound, bound);
    v.exact = v.exact && exact;
    v.dependence = std::max(v.dependence, reads);
  }
  ++storage_epoch_[static_cast<size_t>(storage)];
  case_.ops.push_back(label);
  if (!bind) {
    add_statement(expr);
    return -1;
  }
  Var v = vars_[static_cast<size_t>(target)];
  v.name = fresh_name();
  add_statement(v.name + " = " + expr);
  return add_var(std::move(v));
}

bool GeneratorState::can_write(const Var& v) const {
  if (!v.writable || v.overlapping || storage_ambiguous_[static_cast<size_t>(v.storage)] || v.dtype == ST::Bool) return false;
  if (options_.known_bug_patterns) return true;
  if (storage_repeated_[static_cast<size_t>(v.storage)]) return false;
  int sharing = 0;
  for (const auto& other : vars_) sharing += other.storage == v.storage ? 1 : 0;
  return !v.constant && sharing == 1;
}

bool GeneratorState::repeat_statement() {
  if (statements_.empty()) return false;
  const Statement st = statements_[static_cast<size_t>(pick(static_cast<int>(statements_.size())))];
  Var v = vars_[static_cast<size_t>(st.result)];
  bool mutated = false;
  for (size_t i = 0; i < st.reads.size(); ++i) {
    const Var& r = vars_[static_cast<size_t>(st.reads[i])];
    mutated = mutated || storage_epoch_[static_cast<size_t>(r.storage)] != st.epochs[i];
    v.exact = v.exact && r.exact;
  }
  // A comparison re-evaluated on values an in-place op made inexact could legitimately flip.
  if (v.dtype == ST::Bool && !v.exact) return false;
  if (mutated) v.bound = std::min(v.bound * 4, is_float(v.dtype) ? kFloatCap : kIntCap);
  if (st.view) return emit_view(st.expr, v, "repeat", st.reads[0]) >= 0;
  // CSE merges the twins even across in-place writes (FuzzBugs.DISABLED_CommonSubexpression...).
  const int original = vars_[static_cast<size_t>(st.result)].storage;
  if (!options_.known_bug_patterns && (mutated || storage_epoch_[static_cast<size_t>(original)] > 0)) return false;
  int twin = emit_compute(st.expr, v, "repeat", st.reads);
  if (!options_.known_bug_patterns) {
    storage_repeated_[static_cast<size_t>(original)] = true;
    storage_repeated_[static_cast<size_t>(vars_[static_cast<size_t>(twin)].storage)] = true;
  }
  return true;
}

std::string GeneratorState::source(const std::vector<int>& outputs) const {
  std::string s = "def forward(self";
  for (size_t i = 0; i < case_.inputs.size(); ++i) s += fmt::format(", x{}", i);
  s += "):\n";
  for (const auto& line : lines_) s += "    " + line + "\n";
  std::vector<std::string> names;
  for (int o : outputs) names.push_back(vars_[static_cast<size_t>(o)].name);
  if (names.size() == 1) s += "    return " + names[0] + "\n";
  else s += fmt::format("    return ({})\n", fmt::join(names, ", "));
  return s;
}

}  // namespace tcprof::fuzz
