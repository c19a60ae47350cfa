#include "cli/run_sites.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof::cli {

std::string file_basename(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string normalise_source(std::string_view source) {
  // A trailing comment is not the code: rewording it must not make a new site.
  char quote = 0;
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      source = source.substr(0, i);
      break;
    }
  }
  std::string out;
  bool space = false;
  for (char c : source) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

std::string normalise_frame_name(std::string_view name) {
  // A path-like token followed by :line (and :col): keep the file name only.
  static const std::regex located(R"(([^\s()]*/)?([^\s/():]+):\d+(:\d+)?)");
  return std::regex_replace(std::string(name), located, "$2");
}

std::string site_key(std::string_view type, std::string_view break_id, std::string_view op,
                     std::string_view file, std::string_view source, std::string_view module_path) {
  return fmt::format("{}|{}|{}|{}|{}|{}", type, break_id, op, file_basename(file),
                     normalise_source(source), module_path);
}

int64_t FrameView::break_count() const {
  int64_t n = 0;
  for (const auto& b : breaks) n += b.count;
  return n;
}

RunView view_run(const RunReader& reader, Id run_id) {
  RunView view;
  view.run_id = run_id;
  if (auto run = reader.run(run_id)) view.run = *run;
  std::unordered_map<Id, size_t> frame_index;
  std::map<std::string, int> seen_keys;
  for (const auto& f : reader.frames(run_id)) {
    FrameView fv;
    fv.id = f.id;
    fv.name = f.name;
    fv.module_path = f.module_path;
    fv.file = f.file;
    fv.line = f.line;
    fv.key = normalise_frame_name(f.name);
    if (!f.module_path.empty()) fv.key += " in " + f.module_path;
    int repeat = ++seen_keys[fv.key];
    if (repeat > 1) fv.key += fmt::format(" #{}", repeat);
    frame_index[f.id] = view.frames.size();
    view.frames.push_back(std::move(fv));
  }
  auto frame_of = [&](Id frame_id) -> FrameView* {
    auto it = frame_index.find(frame_id);
    return it == frame_index.end() ? nullptr : &view.frames[it->second];
  };
  std::unordered_map<Id, Id> compile_frame;
  for (const auto& c : reader.compiles(run_id)) compile_frame[c.id] = c.frame_id;
  for (const auto& g : reader.graphs(run_id)) {
    if (FrameView* f = frame_of(compile_frame[g.compile_id])) ++f->graphs;
  }
  for (const auto& r : reader.recompiles(run_id)) {
    if (FrameView* f = frame_of(r.frame_id)) {
      ++f->recompiles;
      f->recompile_rows.push_back(r);
    }
  }
  for (const auto& gf : reader.guard_failures(run_id)) {
    if (FrameView* f = frame_of(compile_frame[gf.compile_id])) ++f->guard_failures;
  }
  for (const auto& c : reader.calls(run_id)) {
    if (c.path == "compiled") continue;
    if (FrameView* f = frame_of(c.frame_id)) ++f->eager_fallbacks;
  }
  for (const auto& b : reader.graph_breaks(run_id)) {
    FrameView* f = frame_of(b.frame_id);
    if (!f) continue;
    std::string key = site_key(b.type, b.break_id, b.op, b.file, b.source, b.module_path);
    auto it = std::find_if(f->breaks.begin(), f->breaks.end(), [&](const SiteBreaks& s) { return s.key == key; });
    if (it == f->breaks.end()) {
      SiteBreaks s;
      s.key = key;
      s.type = b.type;
      s.break_id = b.break_id;
      s.op = b.op;
      s.file = b.file;
      s.source = normalise_source(b.source);
      s.module_path = b.module_path;
      s.reason = b.reason;
      s.hint = b.hint;
      f->breaks.push_back(std::move(s));
      it = std::prev(f->breaks.end());
    }
    it->line = b.line;
    ++it->count;
  }
  for (const auto& h : reader.perf_hints(run_id)) {
    if (h.kind == "recompile_limit") view.limit_hints.push_back(h);
  }
  return view;
}

Id resolve_run(const RunReader& reader, std::optional<Id> requested) {
  auto runs = reader.runs();
  if (runs.empty()) throw Error(ErrorKind::Input, fmt::format("'{}' has no recorded runs", reader.path()));
  if (!requested) return runs.back().id;
  for (const auto& r : runs) {
    if (r.id == *requested) return r.id;
  }
  throw Error(ErrorKind::Usage, fmt::format("'{}' has no run {} (runs {}..{})", reader.path(), *requested,
                                            runs.front().id, runs.back().id));
}

}  // namespace tcprof::cli
