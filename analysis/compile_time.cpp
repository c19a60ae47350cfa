#include "analysis/compile_time.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/duration_text.h"

namespace tcprof::analysis {
namespace {

struct Interval {
  int64_t start = 0, end = 0;
  int priority = 0;  // the innermost stage wins where intervals overlap
};

// Innermost first: time inside a code compile inside Inductor inside the frame compile is code
// compile time.
int priority(CompileStage s) {
  switch (s) {
    case CompileStage::CodeCompile: return 5;
    case CompileStage::Autotuning: return 4;
    case CompileStage::Inductor: return 3;
    case CompileStage::AotAutograd: return 2;
    case CompileStage::Dynamo: return 1;
    case CompileStage::Other: return 0;
  }
  return 0;
}

bool is_cache_event(const std::string& phase) {
  return phase.find("_cache_hit") != std::string::npos || phase.find("_cache_miss") != std::string::npos ||
         phase.find("_cache_bypass") != std::string::npos;
}

// Splits the compile's time among the stages: each moment goes to the innermost stage covering it.
void attribute(const std::vector<Interval>& intervals, std::array<int64_t, kCompileStages>& stage_ns, int64_t& total) {
  std::vector<int64_t> cuts;
  for (const auto& i : intervals) {
    cuts.push_back(i.start);
    cuts.push_back(i.end);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  static const CompileStage by_priority[] = {CompileStage::Other,    CompileStage::Dynamo,     CompileStage::AotAutograd,
                                             CompileStage::Inductor, CompileStage::Autotuning, CompileStage::CodeCompile};
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const int64_t a = cuts[k], b = cuts[k + 1];
    int best = -1;
    for (const auto& i : intervals) {
      if (i.start <= a && i.end >= b) best = std::max(best, i.priority);
    }
    if (best < 0) continue;
    stage_ns[static_cast<int>(by_priority[best])] += b - a;
    total += b - a;
  }
}

}  // namespace

const char* stage_name(CompileStage stage) {
  switch (stage) {
    case CompileStage::Dynamo: return "dynamo";
    case CompileStage::AotAutograd: return "aot_autograd";
    case CompileStage::Inductor: return "inductor";
    case CompileStage::CodeCompile: return "code_compile";
    case CompileStage::Autotuning: return "autotuning";
    case CompileStage::Other: return "other";
  }
  return "other";
}

CompileStage stage_of(const std::string& phase) {
  static const std::unordered_map<std::string, CompileStage> stages = {
      {"entire_frame_compile", CompileStage::Dynamo},
      {"capture", CompileStage::Dynamo},
      {"backend_compile", CompileStage::AotAutograd},
      {"entire_backward_compile", CompileStage::AotAutograd},
      {"decompose", CompileStage::AotAutograd},
      {"joint", CompileStage::AotAutograd},
      {"partition", CompileStage::AotAutograd},
      {"inductor_compile", CompileStage::Inductor},
      {"lower", CompileStage::Inductor},
      {"schedule", CompileStage::Inductor},
      {"codegen", CompileStage::Inductor},
      {"PyCodeCache.load_by_key_path", CompileStage::CodeCompile},
      {"async_compile.precompile", CompileStage::CodeCompile},
      {"compile_file", CompileStage::CodeCompile},
      {"cc", CompileStage::CodeCompile},
      {"nvrtc", CompileStage::CodeCompile},
      {"load", CompileStage::CodeCompile},
      {"CachingAutotuner.benchmark_all_configs", CompileStage::Autotuning},
      {"autotune", CompileStage::Autotuning},
  };
  auto it = stages.find(phase);
  return it == stages.end() ? CompileStage::Other : it->second;
}

std::string advice(const RepeatedGraph& r) {
  std::string labels;
  for (const auto& l : r.compile_labels) labels += (labels.empty() ? "" : ", ") + l;
  return fmt::format("{} compiled the same graph ({} ops) {} times: {} after the first ({} in all); a warm cache, the "
                     "changing input marked dynamic, or regional compilation of repeated blocks compiles it once",
                     labels, r.op_count, r.compile_labels.size(), duration_text(static_cast<double>(r.avoidable_ns)),
                     duration_text(static_cast<double>(r.total_ns)));
}

std::string advice(const RepeatedBlocks& b) {
  const BlockRepeat& r = b.repeat;
  const std::string what = r.name.empty() ? fmt::format("{} back-to-back copies of one {}-op block", r.copies, r.ops_per_copy)
                                          : fmt::format("{} are {} copies of one {}-op block", r.name, r.copies, r.ops_per_copy);
  const double per_copy = r.copies > 1 ? static_cast<double>(b.saving_ns) / (r.copies - 1) : 0;
  return fmt::format("{} in {}'s graph ({} of its {} ops): compiled regionally (torch.compiler.nested_compile_region "
                     "on the block, or torch.compile on each block) the block compiles once, about {} x {} = {} less "
                     "of this compile's {} (in proportion to ops, after Dynamo)",
                     what, b.compile_label, r.covered_ops(), r.graph_ops, r.copies - 1, duration_text(per_copy),
                     duration_text(static_cast<double>(b.saving_ns)), duration_text(static_cast<double>(b.compile_ns)));
}

CompileTimeReport compile_time(const RunReader& reader, Id run_id, RepeatedGraphs repeats) {
  CompileTimeReport out;
  std::unordered_map<Id, std::string> frame_names;
  // "forward in blocks.1.attn": a submodule's frame is told apart from the root's, as diff's
  // frame keys and report's break sites name them.
  for (const auto& f : reader.frames(run_id)) frame_names[f.id] = f.module_path.empty() ? f.name : f.name + " in " + f.module_path;
  std::unordered_map<Id, std::vector<CompilePhaseRow>> phases;
  for (auto& p : reader.compile_phases(run_id)) phases[p.compile_id].push_back(std::move(p));

  for (const auto& c : reader.compiles(run_id)) {
    CompileTime t;
    t.compile_id = c.id;
    t.frame_id = c.frame_id;
    t.compile_label = c.compile_label;
    t.frame = frame_names.count(c.frame_id) ? frame_names[c.frame_id] : std::string();
    t.start_ns = c.start_ns;
    std::vector<Interval> intervals;
    // The compile's own span: time no phase names is still compile time ("other").
    if (c.duration_ns > 0) intervals.push_back({c.start_ns, c.start_ns + c.duration_ns, 0});
    for (const auto& p : phases[c.id]) {
      if (p.phase == "fx_graph_cache_hit") ++t.cache.fx_hits;
      else if (p.phase == "fx_graph_cache_miss") ++t.cache.fx_misses;
      else if (p.phase == "aotautograd_cache_hit") ++t.cache.aot_hits;
      else if (p.phase == "aotautograd_cache_miss") ++t.cache.aot_misses;
      if (p.duration_ns <= 0 || is_cache_event(p.phase)) continue;
      const CompileStage s = stage_of(p.phase);
      if (s == CompileStage::Other) continue;  // a step inside a stage, or a span like `dynamo`
      intervals.push_back({p.start_ns, p.start_ns + p.duration_ns, priority(s)});
    }
    attribute(intervals, t.stage_ns, t.total_ns);
    out.compiles.push_back(std::move(t));
  }
  std::sort(out.compiles.begin(), out.compiles.end(),
            [](const CompileTime& a, const CompileTime& b) { return a.start_ns < b.start_ns; });

  std::map<Id, FrameCompileTime> frames;
  for (const auto& t : out.compiles) {
    FrameCompileTime& f = frames[t.frame_id];
    f.frame_id = t.frame_id;
    f.frame = t.frame;
    ++f.compiles;
    f.total_ns += t.total_ns;
    for (int s = 0; s < kCompileStages; ++s) f.stage_ns[s] += t.stage_ns[s];
    out.total_ns += t.total_ns;
    for (int s = 0; s < kCompileStages; ++s) out.stage_ns[s] += t.stage_ns[s];
    out.cache.fx_hits += t.cache.fx_hits;
    out.cache.fx_misses += t.cache.fx_misses;
    out.cache.aot_hits += t.cache.aot_hits;
    out.cache.aot_misses += t.cache.aot_misses;
  }
  for (auto& [id, f] : frames) out.frames.push_back(std::move(f));
  std::stable_sort(out.frames.begin(), out.frames.end(),
                   [](const FrameCompileTime& a, const FrameCompileTime& b) { return a.total_ns > b.total_ns; });

  if (repeats == RepeatedGraphs::Skip) return out;
  // The same captured graph (identical IR) compiled by more than one compile.
  std::map<std::string, std::vector<const GraphRow*>> by_ir;
  const std::vector<GraphRow> graphs = reader.graphs(run_id);
  for (const auto& g : graphs) {
    if (g.captured() && !g.ir.empty()) by_ir[g.ir].push_back(&g);
  }
  std::unordered_map<Id, const CompileTime*> by_compile;
  for (const auto& t : out.compiles) by_compile[t.compile_id] = &t;
  for (const auto& [ir, list] : by_ir) {
    if (list.size() < 2) continue;
    RepeatedGraph r;
    std::vector<const CompileTime*> compiles;
    for (const GraphRow* g : list) {
      auto it = by_compile.find(g->compile_id);
      if (it != by_compile.end()) compiles.push_back(it->second);
    }
    if (compiles.size() < 2) continue;
    std::sort(compiles.begin(), compiles.end(),
              [](const CompileTime* a, const CompileTime* b) { return a->start_ns < b->start_ns; });
    for (const CompileTime* c : compiles) {
      r.compile_labels.push_back(c->compile_label);
      r.total_ns += c->total_ns;
    }
    r.frame = compiles.front()->frame;
    r.op_count = list.front()->op_count;
    r.avoidable_ns = r.total_ns - compiles.front()->total_ns;  // the first compile is needed
    out.repeated.push_back(std::move(r));
  }
  std::sort(out.repeated.begin(), out.repeated.end(),
            [](const RepeatedGraph& a, const RepeatedGraph& b) { return a.avoidable_ns > b.avoidable_ns; });

  // Blocks repeated inside one graph: only Dynamo's FX code names ops and parameters so; tcprof's
  // own compiler already compiles identical kernels of repeated blocks once.
  for (const auto& g : graphs) {
    if (g.kind != "dynamo") continue;
    auto it = by_compile.find(g.compile_id);
    if (it == by_compile.end()) continue;
    BlockRepeat repeat = find_block_repeat(g.ir);
    if (repeat.copies < 2 || repeat.graph_ops == 0) continue;
    const CompileTime& c = *it->second;
    RepeatedBlocks b;
    b.compile_label = c.compile_label;
    b.frame = c.frame;
    b.repeat = std::move(repeat);
    b.compile_ns = c.total_ns;
    b.after_dynamo_ns = c.total_ns - c.stage_ns[static_cast<int>(CompileStage::Dynamo)];
    const double covered = static_cast<double>(b.repeat.covered_ops()) / b.repeat.graph_ops;
    const double spared = static_cast<double>(b.repeat.copies - 1) / b.repeat.copies;
    b.saving_ns = static_cast<int64_t>(static_cast<double>(b.after_dynamo_ns) * covered * spared);
    // Two copies of a small block in a large graph are not worth a word.
    if (b.saving_ns * 20 < b.compile_ns) continue;
    out.blocks.push_back(std::move(b));
  }
  std::stable_sort(out.blocks.begin(), out.blocks.end(),
                   [](const RepeatedBlocks& a, const RepeatedBlocks& b) { return a.saving_ns > b.saving_ns; });
  return out;
}

}  // namespace tcprof::analysis
