#include "cli/gate_format.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/text_format.h"

namespace tcprof::cli {

using namespace tcprof::analysis;

namespace {

using nlohmann::json;

std::string where(const Finding& f) {
  if (f.file.empty()) return "";
  return text::location(f.file, f.line);
}

void write_finding(fmt::memory_buffer& out, const Finding& f, bool text_mode) {
  auto o = std::back_inserter(out);
  const std::string pad = text_mode ? "    " : "";
  if (text_mode) fmt::format_to(o, "{}", text::wrap(f.regression ? "  REGRESSION " : "  improved: ", f.title));
  std::string at = where(f);
  if (!at.empty()) fmt::format_to(o, "{}", text::wrap(pad + "at ", at));
  if (!f.frame.empty()) fmt::format_to(o, "{}", text::wrap(pad + "in ", "frame " + f.frame));
  if (!f.source.empty()) fmt::format_to(o, "{}", text::wrap(pad + "| ", f.source));
  if (!f.reason.empty()) fmt::format_to(o, "{}", text::wrap(pad, f.reason));
  if (!f.hint.empty()) fmt::format_to(o, "{}", text::wrap(pad + "hint: ", f.hint));
  const std::string unit = f.unit.empty() ? "" : " " + f.unit;
  fmt::format_to(o, "{}{} {}{}, now {}{}\n", pad, f.unit.empty() ? "baseline" : "limit", f.baseline, unit, f.current, unit);
}

std::string cell(int64_t now, int64_t before, bool in_baseline) {
  if (!in_baseline || now == before) return std::to_string(now);
  return fmt::format("{}->{}", before, now);
}

std::string summary_line(const GateResult& r, const GateContext& c) {
  std::string against = c.baseline_path.empty() ? "the limits" : c.baseline_path;
  if (r.regressions() > 0) {
    return fmt::format("FAIL: {} against {}", text::plural(r.regressions(), "regression", "regressions"), against);
  }
  if (r.improvements() > 0) {
    return fmt::format("IMPROVED: {} against {}", text::plural(r.improvements(), "improvement", "improvements"),
                       against);
  }
  return fmt::format("PASS: matches {}", against);
}

std::string github_escape(std::string_view s, bool property) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      case ':': out += property ? "%3A" : ":"; break;
      case ',': out += property ? "%2C" : ","; break;
      default: out += ch;
    }
  }
  return out;
}

std::string finding_details(const Finding& f) {
  fmt::memory_buffer out;
  write_finding(out, f, false);
  return fmt::to_string(out);
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') {
          out += ' ';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string gate_text(const GateResult& r, const GateContext& c) {
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "{}", text::wrap("tcprof check ", c.model));
  if (!c.baseline_path.empty()) fmt::format_to(o, "{}", text::wrap("  baseline ", c.baseline_path));
  if (!c.db_path.empty()) fmt::format_to(o, "{}", text::wrap("  run      ", c.db_path));
  if (!r.findings.empty()) out.push_back('\n');
  for (const auto& f : r.findings) {
    write_finding(out, f, true);
    out.push_back('\n');
  }
  if (r.findings.empty()) out.push_back('\n');
  fmt::format_to(o, "  {:<44} {:>7} {:>7} {:>7} {:>7}\n", "Frame", "graphs", "breaks", "recomp", "eager");
  for (const auto& g : r.frames) {
    std::string name = g.key + (g.in_run ? "" : " (gone)");
    if (r.has_baseline && g.in_run && !g.in_baseline) name += " (new)";
    fmt::format_to(o, "  {:<44} {:>7} {:>7} {:>7} {:>7}\n", text::fit(name, 44),
                   cell(g.graphs, g.base_graphs, g.in_baseline), cell(g.breaks, g.base_breaks, g.in_baseline),
                   cell(g.recompiles, g.base_recompiles, g.in_baseline),
                   cell(g.eager_fallbacks, g.base_eager_fallbacks, g.in_baseline));
  }
  if (r.has_baseline) fmt::format_to(o, "  (baseline->now where they differ)\n");
  fmt::format_to(o, "\n{}\n", summary_line(r, c));
  if (r.regressions() == 0 && r.improvements() > 0 && !c.update_command.empty()) {
    fmt::format_to(o, "Lock the improvement in by updating the baseline:\n  {}\n", c.update_command);
  }
  return fmt::to_string(out);
}

json gate_json(const GateResult& r, const GateContext& c) {
  json findings = json::array();
  for (const auto& f : r.findings) {
    json item = {{"kind", f.kind}, {"regression", f.regression}, {"frame", f.frame}, {"title", f.title},
                 {"file", f.file}, {"line", f.line}, {"source", f.source}, {"reason", f.reason},
                 {"hint", f.hint}, {"baseline", f.baseline}, {"current", f.current}};
    if (!f.unit.empty()) item["unit"] = f.unit;  // compile time: ms; counts have none
    findings.push_back(std::move(item));
  }
  json frames = json::array();
  for (const auto& g : r.frames) {
    json frame = {{"frame", g.key}, {"in_run", g.in_run}, {"in_baseline", g.in_baseline},
                  {"graphs", g.graphs}, {"graph_breaks", g.breaks}, {"recompiles", g.recompiles},
                  {"eager_fallbacks", g.eager_fallbacks}};
    if (g.in_baseline) {
      frame["baseline"] = {{"graphs", g.base_graphs}, {"graph_breaks", g.base_breaks},
                           {"recompiles", g.base_recompiles}, {"eager_fallbacks", g.base_eager_fallbacks}};
    }
    frames.push_back(frame);
  }
  json j = {{"verdict", r.verdict()}, {"regressions", r.regressions()}, {"improvements", r.improvements()},
            {"baseline", c.baseline_path}, {"db", c.db_path}, {"model", c.model},
            {"findings", findings}, {"frames", frames}};
  if (r.regressions() == 0 && r.improvements() > 0) j["update_command"] = c.update_command;
  return j;
}

std::string gate_junit(const GateResult& r, const GateContext& c) {
  struct Case {
    std::string name;
    std::vector<const Finding*> failures, notes;
  };
  std::vector<Case> cases;
  for (const auto& g : r.frames) cases.push_back({g.key, {}, {}});
  for (const auto& f : r.findings) {
    std::string name = f.frame.empty() ? "limits" : f.frame;
    auto it = std::find_if(cases.begin(), cases.end(), [&](const Case& k) { return k.name == name; });
    if (it == cases.end()) {
      cases.push_back({name, {}, {}});
      it = std::prev(cases.end());
    }
    (f.regression ? it->failures : it->notes).push_back(&f);
  }
  int64_t failures = 0;
  for (const auto& k : cases) failures += k.failures.empty() ? 0 : 1;
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  std::string suite = xml_escape("tcprof check " + c.model);
  fmt::format_to(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fmt::format_to(o, "<testsuites name=\"tcprof check\" tests=\"{}\" failures=\"{}\">\n", cases.size(), failures);
  fmt::format_to(o, "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n", suite, cases.size(),
                 failures);
  for (const auto& k : cases) {
    fmt::format_to(o, "    <testcase classname=\"tcprof.check\" name=\"{}\"", xml_escape(k.name));
    if (k.failures.empty() && k.notes.empty()) {
      fmt::format_to(o, "/>\n");
      continue;
    }
    fmt::format_to(o, ">\n");
    if (!k.failures.empty()) {
      // JUnit allows one failure per testcase: the first names it, the body lists them all.
      const Finding& first = *k.failures.front();
      std::string message = first.title;
      if (!first.file.empty()) message += " at " + where(first);
      if (k.failures.size() > 1) message += fmt::format(" (and {} more)", k.failures.size() - 1);
      std::string body;
      for (const Finding* f : k.failures) body += f->title + "\n" + finding_details(*f) + "\n";
      fmt::format_to(o, "      <failure type=\"{}\" message=\"{}\">{}</failure>\n", xml_escape(first.kind),
                     xml_escape(message), xml_escape(body));
    }
    if (!k.notes.empty()) {
      std::string body;
      for (const Finding* f : k.notes) body += "improved: " + f->title + "\n" + finding_details(*f) + "\n";
      fmt::format_to(o, "      <system-out>{}</system-out>\n", xml_escape(body));
    }
    fmt::format_to(o, "    </testcase>\n");
  }
  fmt::format_to(o, "  </testsuite>\n</testsuites>\n");
  return fmt::to_string(out);
}

std::string gate_github(const GateResult& r, const GateContext& c) {
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  for (const auto& f : r.findings) {
    std::string props;
    // Only the run's own sites have a path GitHub can place; baseline sites keep a file name.
    if (!f.file.empty() && f.file.find('/') != std::string::npos) {
      props = "file=" + github_escape(text::display_path(f.file), true);
      if (f.line > 0) props += fmt::format(",line={}", f.line);
      props += ",";
    }
    props += "title=" + github_escape("tcprof: " + f.title, true);
    std::string message = f.title;
    if (!f.source.empty()) message += fmt::format(": `{}`", f.source);
    if (!f.reason.empty()) message += ". " + f.reason;
    if (!f.hint.empty()) message += ". Hint: " + f.hint;
    message += fmt::format(" (baseline {}, now {})", f.baseline, f.current);
    fmt::format_to(o, "::{} {}::{}\n", f.regression ? "error" : "notice", props, github_escape(message, false));
  }
  fmt::format_to(o, "{}\n", summary_line(r, c));
  if (r.regressions() == 0 && r.improvements() > 0 && !c.update_command.empty()) {
    fmt::format_to(o, "Lock the improvement in by updating the baseline: {}\n", c.update_command);
  }
  return fmt::to_string(out);
}

}  // namespace tcprof::cli
