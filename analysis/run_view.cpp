#include "analysis/run_view.h"

#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/compile_time.h"
#include "analysis/recompiles.h"
#include "core/error.h"

namespace tcprof::analysis {

int64_t FrameView::break_count() const {
  int64_t n = 0;
  for (const auto& b : breaks) n += b.count;
  return n;
}

namespace {

std::vector<FrameView> frame_views(const RunReader& reader, Id run_id) {
  std::vector<FrameView> frames;
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
    frames.push_back(std::move(fv));
  }
  return frames;
}

}  // namespace

RunView view_run(const RunReader& reader, Id run_id) {
  RunView view;
  view.run_id = run_id;
  if (auto run = reader.run(run_id)) view.run = *run;
  view.frames = frame_views(reader, run_id);
  std::unordered_map<Id, FrameView*> frame_of;
  for (auto& f : view.frames) frame_of[f.id] = &f;
  auto find = [&](Id frame_id) -> FrameView* {
    auto it = frame_of.find(frame_id);
    return it == frame_of.end() ? nullptr : it->second;
  };
  std::unordered_map<Id, Id> compile_frame;
  for (const auto& c : reader.compiles(run_id)) compile_frame[c.id] = c.frame_id;
  for (const auto& g : reader.graphs(run_id)) {
    if (!g.captured()) continue;  // a training compile's forward and backward are one graph
    if (FrameView* f = find(compile_frame[g.compile_id])) ++f->graphs;
  }
  for (auto& r : recompiles_with_failures(reader, run_id)) {
    if (FrameView* f = find(r.frame_id)) {
      ++f->recompiles;
      f->recompile_rows.push_back(std::move(r));
    }
  }
  for (const auto& gf : reader.guard_failures(run_id)) {
    if (FrameView* f = find(compile_frame[gf.compile_id])) ++f->guard_failures;
  }
  for (const auto& c : reader.calls(run_id)) {
    if (c.path == "compiled") continue;
    if (FrameView* f = find(c.frame_id)) ++f->eager_fallbacks;
  }
  std::unordered_map<Id, std::vector<GraphBreakRow>> breaks_by_frame;
  for (auto& b : reader.graph_breaks(run_id)) breaks_by_frame[b.frame_id].push_back(std::move(b));
  for (auto& [frame_id, rows] : breaks_by_frame) {
    if (FrameView* f = find(frame_id)) f->breaks = group_break_sites(rows);
  }
  for (const auto& h : reader.perf_hints(run_id)) {
    if (h.kind == "recompile_limit") view.limit_hints.push_back(h);
  }
  for (const auto& t : compile_time(reader, run_id, RepeatedGraphs::Skip).frames) {
    if (FrameView* f = find(t.frame_id)) f->compile_ns = t.total_ns;
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

}  // namespace tcprof::analysis
