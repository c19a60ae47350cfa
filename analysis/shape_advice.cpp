#include "analysis/shape_advice.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/recompiles.h"

namespace tcprof::analysis {
namespace {

using nlohmann::json;
using Shapes = std::vector<std::optional<std::vector<int64_t>>>;  // per input; nullopt: not a tensor

Shapes parse_shapes(const std::string& text) {
  Shapes out;
  json j = json::parse(text.empty() ? "[]" : text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& input : j) {
    bool tensor = input.is_array() &&
                  std::all_of(input.begin(), input.end(), [](const json& d) { return d.is_number_integer(); });
    if (tensor) {
      out.push_back(input.get<std::vector<int64_t>>());
    } else {
      out.emplace_back();
    }
  }
  return out;
}

// Padding above this costs more than a dynamic graph usually loses (a rule of thumb: static
// shapes buy vectorisation and constant-folded index math, rarely more than this).
constexpr double kPadBudgetPercent = 25.0;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// What the failed guards of one recompile say.
struct FailedGuards {
  bool size_guard = false;                       // a size guard failed ("size mismatch at index D")
  std::vector<const GuardFailureRow*> decisions;  // shape decisions (`x.size(0) > 4`) that flipped
  std::set<int> dims;                            // dimensions the failures name
};

struct Cause {
  int64_t size_guard = 0;
  std::vector<ShapeDecision> decisions;
};

// The dimensions an expression reads: `x.size(1) % 8 == 0` names 1.
std::set<int> dims_in(const std::string& text, const std::regex& pattern) {
  std::set<int> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it) {
    out.insert(std::stoi((*it)[1]));
  }
  return out;
}

bool names_dim(const std::string& expr, int dim) {
  static const std::regex size_dim(R"(size\((\d+)\))");
  std::set<int> dims = dims_in(expr, size_dim);
  return dims.empty() || dims.count(dim);
}

std::string without_not(std::string expr) {
  if (expr.rfind("not (", 0) == 0 && expr.back() == ')') expr = expr.substr(5, expr.size() - 6);
  return expr;
}

FailedGuards classify(const std::vector<GuardFailureRow>& failures) {
  static const std::regex at_index(R"(at index (\d+))");
  static const std::regex size_dim(R"(size\((\d+)\))");
  FailedGuards out;
  for (const auto& f : failures) {
    if (f.guard_kind == "shape_expr") {
      out.decisions.push_back(&f);
      for (int d : dims_in(f.guard_expr, size_dim)) out.dims.insert(d);
    } else if (f.guard_kind == "size" || f.guard_kind == "dynamic_size" ||
               f.message.find("size mismatch") != std::string::npos) {
      out.size_guard = true;
      for (int d : dims_in(f.message, at_index)) out.dims.insert(d);
    }
  }
  return out;
}

}  // namespace

std::optional<PadPlan> plan_padding(const std::vector<SizeSeen>& sizes, int64_t max_graphs) {
  if (sizes.empty() || max_graphs < 1) return std::nullopt;
  int64_t lo = sizes.front().size, hi = sizes.back().size;
  for (const auto& s : sizes) {
    lo = std::min(lo, s.size);
    hi = std::max(hi, s.size);
  }
  std::optional<PadPlan> best;
  // Multiples of 8 keep vector loads aligned; powers of two up to the largest size.
  for (int64_t m = 8; m / 2 < std::max<int64_t>(hi, 8); m *= 2) {
    PadPlan p;
    p.multiple = m;
    p.padded_lo = round_up(lo, m);
    p.padded_hi = round_up(hi, m);
    p.graphs = (p.padded_hi - p.padded_lo) / m + 1;
    if (p.graphs > max_graphs) continue;
    // Extra elements of the input, with its other dimensions as they were (they scale both sides).
    double actual = 0, padded = 0;
    for (const auto& s : sizes) {
      actual += static_cast<double>(s.size * s.calls);
      padded += static_cast<double>(round_up(s.size, m) * s.calls);
    }
    p.extra_percent = actual > 0 ? 100.0 * (padded - actual) / actual : 0;
    // Least padding wins; at equal cost, fewer graphs (the larger multiple).
    if (!best || p.extra_percent < best->extra_percent - 1e-9 ||
        (p.extra_percent <= best->extra_percent + 1e-9 && p.graphs < best->graphs)) {
      best = p;
    }
  }
  return best;
}

ShapeAdvice compute_shape_advice(const std::vector<CallRow>& calls, const std::vector<RecompileRow>& recompiles,
                                 const std::vector<GuardRow>& guards,
                                 const std::vector<GuardFailureRow>& failures, int recompile_limit) {
  ShapeAdvice advice;
  advice.recompile_limit = recompile_limit;
  advice.calls = static_cast<int64_t>(calls.size());
  // (input, dim) -> size -> calls; and the size each call had.
  std::map<std::pair<int, int>, std::map<int64_t, SizeSeen>> seen;
  std::vector<Shapes> shapes;
  std::unordered_map<Id, size_t> call_index;
  for (const auto& c : calls) {
    call_index[c.id] = shapes.size();
    shapes.push_back(parse_shapes(c.input_shapes));
    const Shapes& s = shapes.back();
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i]) continue;
      for (size_t d = 0; d < s[i]->size(); ++d) {
        SizeSeen& z = seen[{static_cast<int>(i), static_cast<int>(d)}][(*s[i])[d]];
        z.size = (*s[i])[d];
        ++z.calls;
      }
    }
  }
  // A recompile is caused by the dimensions whose size on its call had not been seen before; the
  // failed guards narrow it down when several changed at once, and say whether a size guard or a
  // decision on the size failed.
  std::map<std::pair<int, int>, int64_t> caused;
  std::map<std::pair<int, int>, Cause> causes;
  for (const auto& r : recompiles) {
    auto it = call_index.find(r.call_id);
    if (it == call_index.end()) {
      ++advice.unattributed_recompiles;
      continue;
    }
    const Shapes& now = shapes[it->second];
    std::vector<std::pair<int, int>> candidates;
    for (size_t i = 0; i < now.size(); ++i) {
      if (!now[i]) continue;
      for (size_t d = 0; d < now[i]->size(); ++d) {
        bool fresh = true;
        for (size_t k = 0; k < it->second && fresh; ++k) {
          const Shapes& before = shapes[k];
          if (i < before.size() && before[i] && d < before[i]->size() && (*before[i])[d] == (*now[i])[d]) fresh = false;
        }
        if (fresh) candidates.emplace_back(static_cast<int>(i), static_cast<int>(d));
      }
    }
    FailedGuards failed = classify(r.failures);
    std::vector<std::pair<int, int>> narrowed;
    for (const auto& c : candidates) {
      if (failed.dims.count(c.second)) narrowed.push_back(c);
    }
    if (!narrowed.empty()) candidates = narrowed;
    if (candidates.empty()) {
      ++advice.unattributed_recompiles;
      continue;
    }
    for (const auto& c : candidates) {
      ++caused[c];
      ++seen[c][(*now[static_cast<size_t>(c.first)])[static_cast<size_t>(c.second)]].recompiles;
      Cause& cause = causes[c];
      if (failed.size_guard) ++cause.size_guard;
      for (const GuardFailureRow* d : failed.decisions) {
        if (!names_dim(d->guard_expr, c.second)) continue;
        std::string expr = without_not(d->guard_expr);
        auto it = std::find_if(cause.decisions.begin(), cause.decisions.end(), [&](const ShapeDecision& s) {
          return s.expr == expr && s.file == d->guard_file && s.line == d->guard_line;
        });
        if (it == cause.decisions.end()) {
          cause.decisions.push_back({expr, d->guard_file, d->guard_line, 0});
          it = std::prev(cause.decisions.end());
        }
        ++it->recompiles;
      }
    }
  }
  for (auto& [key, sizes] : seen) {
    if (sizes.size() < 2) continue;
    DimAdvice a;
    a.input = key.first;
    a.dim = key.second;
    for (auto& [size, z] : sizes) a.sizes.push_back(z);
    a.recompiles = caused[key];
    a.size_guard_recompiles = causes[key].size_guard;
    a.decisions = causes[key].decisions;
    a.dynamic_flag = fmt::format("--dynamic {}:{}", a.input, a.dim);
    a.pad = plan_padding(a.sizes, recompile_limit);
    bool only_decisions = !a.decisions.empty() && a.size_guard_recompiles == 0;
    a.recommendation = only_decisions ? "branch"
                       : a.pad && a.pad->extra_percent <= kPadBudgetPercent ? "pad" : "dynamic";
    advice.dims.push_back(std::move(a));
  }
  static const std::regex modulo(R"(%\s*(\d+))");
  std::map<size_t, std::set<Id>> guarded_compiles;
  for (const auto& g : guards) {
    std::smatch m;
    if (!std::regex_search(g.expr, m, modulo)) continue;
    std::string expr = without_not(g.expr);
    int64_t multiple = std::stoll(m[1]);
    auto same = std::find_if(advice.alignment.begin(), advice.alignment.end(), [&](const AlignmentGuard& a) {
      return a.file == g.file && a.line == g.line && a.multiple == multiple && (!g.file.empty() || a.expr == expr);
    });
    if (same == advice.alignment.end()) {
      advice.alignment.push_back({expr, g.file, g.line, multiple, 0, 0});
      same = std::prev(advice.alignment.end());
    }
    size_t index = static_cast<size_t>(same - advice.alignment.begin());
    guarded_compiles[index].insert(g.compile_id);
    for (const auto& f : failures) same->failures += f.guard_id == g.id ? 1 : 0;
  }
  for (auto& [index, compiles] : guarded_compiles) {
    advice.alignment[index].graphs = static_cast<int64_t>(compiles.size());
  }
  return advice;
}

ShapeAdvice shape_advice(const RunReader& reader, Id run_id) {
  int limit = 8;
  if (auto run = reader.run(run_id)) {
    json config = json::parse(run->config_json.empty() ? "{}" : run->config_json, nullptr, false);
    if (config.is_object() && config.contains("recompile_limit") && config["recompile_limit"].is_number_integer()) {
      limit = config["recompile_limit"].get<int>();
    }
  }
  return compute_shape_advice(reader.calls(run_id), recompiles_with_failures(reader, run_id), reader.guards(run_id),
                              reader.guard_failures(run_id), limit);
}

}  // namespace tcprof::analysis
