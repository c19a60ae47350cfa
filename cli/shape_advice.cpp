#include "cli/shape_advice.h"

#include "cli/text_format.h"

namespace tcprof::cli {

using nlohmann::json;
using namespace tcprof::analysis;

namespace {

std::string sizes_text(const std::vector<SizeSeen>& sizes) {
  if (sizes.size() <= 6) {
    std::string s;
    for (const auto& z : sizes) s += (s.empty() ? "" : ", ") + std::to_string(z.size);
    return "sizes " + s;
  }
  return fmt::format("{} sizes in {}..{}", sizes.size(), sizes.front().size, sizes.back().size);
}

// Which failed guards caused a dimension's recompiles: a size guard is what --dynamic or padding
// removes; a decision on the size is not.
void write_causes(fmt::memory_buffer& out, const DimAdvice& a) {
  auto o = std::back_inserter(out);
  if (a.size_guard_recompiles > 0 && !a.decisions.empty()) {
    fmt::format_to(o, "{}", text::wrap("      cause: ", fmt::format("a size guard ({})", text::plural(a.size_guard_recompiles,
                                                                                               "recompile", "recompiles"))));
  }
  for (const auto& d : a.decisions) {
    std::string where = d.file.empty() ? std::string() : " at " + text::location(d.file, d.line);
    fmt::format_to(o, "{}", text::wrap("      cause: ", fmt::format("a decision on the size, {}{} ({}): each outcome "
                                                                   "compiles its own graph",
                                                                   d.expr, where,
                                                                   text::plural(d.recompiles, "recompile", "recompiles"))));
  }
}

}  // namespace

void write_shape_advice_text(fmt::memory_buffer& out, const ShapeAdvice& advice) {
  if (advice.empty()) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\n  Shape advice (recompile limit {})\n", advice.recompile_limit);
  for (const auto& a : advice.dims) {
    int64_t calls = 0;
    for (const auto& z : a.sizes) calls += z.calls;
    std::string caused;
    for (const auto& z : a.sizes) {
      if (z.recompiles > 0) caused += (caused.empty() ? " at " : ", ") + std::to_string(z.size);
    }
    std::string line = fmt::format("input {} dim {}: {} over {}, {}{}", a.input, a.dim, sizes_text(a.sizes),
                                   text::plural(calls, "call", "calls"),
                                   text::plural(a.recompiles, "recompile", "recompiles"), caused);
    fmt::format_to(o, "{}", text::wrap("    ", line));
    write_causes(out, a);
    if (a.recommendation == "branch") {
      const ShapeDecision& d = a.decisions.front();
      std::string where = d.file.empty() ? std::string() : " at " + text::location(d.file, d.line);
      fmt::format_to(o, "{}", text::wrap("      advice: ", fmt::format("make the decision{} independent of the size (for "
                                                                        "example torch.where on a mask instead of an "
                                                                        "if), or keep every size on one side of it; {} "
                                                                        "cannot remove these recompiles",
                                                                        where, a.dynamic_flag)));
      continue;
    }
    std::string dynamic_line = fmt::format("mark it dynamic: {} (one graph for every size)", a.dynamic_flag);
    std::string pad_line, pad_detail;
    if (a.pad) {
      pad_line = fmt::format("pad to a multiple of {} (+{:.1f}% elements)", a.pad->multiple, a.pad->extra_percent);
      pad_detail = fmt::format("        {} cover {}..{}, within the recompile limit\n",
                               text::plural(a.pad->graphs, "static graph", "static graphs"), a.pad->padded_lo,
                               a.pad->padded_hi);
    }
    if (a.recommendation == "pad") {
      fmt::format_to(o, "      advice: {}\n{}      or {}\n", pad_line, pad_detail, dynamic_line);
    } else {
      fmt::format_to(o, "      advice: {}\n", dynamic_line);
      if (a.pad) {
        fmt::format_to(o, "      or {}\n{}", pad_line, pad_detail);
      } else {
        fmt::format_to(o, "      (no multiple keeps the range within {} graphs)\n", advice.recompile_limit);
      }
    }
  }
  for (const auto& g : advice.alignment) {
    std::string where = g.file.empty() ? "" : " at " + text::location(g.file, g.line);
    fmt::format_to(o, "{}", text::wrap("    alignment: ", g.expr + where));
    fmt::format_to(o, "      {} specialised on sizes {}divisible by {}; {}\n",
                   text::plural(g.graphs, "graph", "graphs"), g.graphs == 1 ? "" : "(not) ", g.multiple,
                   text::plural(g.failures, "guard check failed", "guard checks failed"));
    fmt::format_to(o, "      pad to a multiple of {} to keep one aligned graph\n", g.multiple);
  }
}

json shape_advice_json(const ShapeAdvice& advice) {
  json dims = json::array();
  for (const auto& a : advice.dims) {
    json sizes = json::array();
    for (const auto& z : a.sizes) sizes.push_back({{"size", z.size}, {"calls", z.calls}, {"recompiles", z.recompiles}});
    json decisions = json::array();
    for (const auto& s : a.decisions) {
      decisions.push_back({{"expr", s.expr}, {"file", s.file}, {"line", s.line}, {"recompiles", s.recompiles}});
    }
    json d = {{"input", a.input}, {"dim", a.dim}, {"sizes", sizes}, {"recompiles", a.recompiles},
              {"size_guard_recompiles", a.size_guard_recompiles}, {"decisions", decisions},
              {"recommendation", a.recommendation}, {"dynamic_flag", a.dynamic_flag}, {"pad", nullptr}};
    if (a.pad) {
      d["pad"] = {{"multiple", a.pad->multiple}, {"graphs", a.pad->graphs}, {"padded_lo", a.pad->padded_lo},
                  {"padded_hi", a.pad->padded_hi}, {"extra_elements_percent", a.pad->extra_percent}};
    }
    dims.push_back(d);
  }
  json alignment = json::array();
  for (const auto& g : advice.alignment) {
    alignment.push_back({{"expr", g.expr}, {"file", g.file}, {"line", g.line}, {"multiple", g.multiple},
                         {"graphs", g.graphs}, {"failures", g.failures}});
  }
  return {{"recompile_limit", advice.recompile_limit}, {"calls", advice.calls}, {"dims", dims},
          {"alignment", alignment}, {"unattributed_recompiles", advice.unattributed_recompiles}};
}

}  // namespace tcprof::cli
