// Where compile time goes, per compile and per frame, for tcprof's own runs and imported
// torch.compile runs alike: the recorded phases sorted into five stages, the compile caches' hits
// and misses, and graphs compiled more than once (what a warm cache or regional compilation of
// repeated blocks would save). `report`, and later `diff`, `check` and the GUI, show this.
//
// Stages, from the phase names each backend records (nested phases go to the innermost stage):
//   dynamo        tracing Python into a graph: torch `entire_frame_compile` less what it contains;
//                 tcprof `capture`
//   aot_autograd  graph transforms before code generation: torch `backend_compile`,
//                 `entire_backward_compile`; tcprof `decompose`, `joint`, `partition`
//   inductor      lowering and generating code: torch `inductor_compile`; tcprof `lower`,
//                 `schedule`, `codegen`
//   code_compile  the system compiler and loading: torch `PyCodeCache.load_by_key_path`,
//                 `async_compile.precompile`, `compile_file`; tcprof `cc`, `nvrtc`, `load`
//   autotuning    timing candidate kernels: torch `CachingAutotuner.benchmark_all_configs`; tcprof
//                 `autotune`
//   other         the rest of the compile's span (tcprof's `<backend>_compile` outside its steps)
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/repeated_blocks.h"
#include "core/run_reader.h"

namespace tcprof::analysis {

enum class CompileStage { Dynamo, AotAutograd, Inductor, CodeCompile, Autotuning, Other };
constexpr int kCompileStages = 6;
const char* stage_name(CompileStage stage);  // "dynamo", "aot_autograd", ...
// The stage a recorded phase name belongs to, or Other for names outside every stage.
CompileStage stage_of(const std::string& phase);

struct CacheCounts {
  int fx_hits = 0, fx_misses = 0, aot_hits = 0, aot_misses = 0;
  bool any() const { return fx_hits + fx_misses + aot_hits + aot_misses > 0; }
};

struct CompileTime {
  Id compile_id = 0, frame_id = 0;
  std::string compile_label, frame;  // frame: "forward", or "forward in blocks.1.attn"
  int64_t start_ns = 0;
  int64_t total_ns = 0;  // the union of the compile's span and its phases (lazy backward included)
  std::array<int64_t, kCompileStages> stage_ns{};
  CacheCounts cache;
};

struct FrameCompileTime {
  Id frame_id = 0;
  std::string frame;
  int compiles = 0;
  int64_t total_ns = 0;
  std::array<int64_t, kCompileStages> stage_ns{};
};

// One captured graph (identical IR) compiled by several compiles: after the first, each could
// have come from a warm cache, from marking the input that changed dynamic, or from one compile
// shared by repeated blocks (regional compilation).
struct RepeatedGraph {
  std::vector<std::string> compile_labels;  // in compile order
  std::string frame;
  int op_count = 0;
  int64_t total_ns = 0;      // the compiles' time together
  int64_t avoidable_ns = 0;  // all but the first
};

// One graph holding back-to-back copies of a block (repeated_blocks.h): compiled regionally, the
// stages after Dynamo would handle one copy instead of all of them.
struct RepeatedBlocks {
  std::string compile_label, frame;
  BlockRepeat repeat;
  int64_t compile_ns = 0;      // the compile's time
  int64_t after_dynamo_ns = 0;  // of which after tracing: the part that grows with the graph
  // What compiling one copy instead of `copies` would save, in proportion to the ops the copies
  // cover: after_dynamo_ns * covered / graph_ops * (copies - 1) / copies. An estimate.
  int64_t saving_ns = 0;
};

struct CompileTimeReport {
  std::vector<CompileTime> compiles;       // in compile order
  std::vector<FrameCompileTime> frames;    // most compile time first
  std::vector<RepeatedGraph> repeated;     // most avoidable time first
  // Dynamo graphs with repeated blocks whose saving is at least 5% of their compile, largest first.
  std::vector<RepeatedBlocks> blocks;
  int64_t total_ns = 0;
  std::array<int64_t, kCompileStages> stage_ns{};
  CacheCounts cache;
};

// `repeats` Skip leaves `repeated` and `blocks` empty and does not read the graphs' IR (the CI gate needs only
// the frames' totals).
enum class RepeatedGraphs { Find, Skip };
CompileTimeReport compile_time(const RunReader& reader, Id run_id, RepeatedGraphs repeats = RepeatedGraphs::Find);

// The one sentence `report` and the GUI show for each finding: what repeats, what it costs, what
// would compile it once.
std::string advice(const RepeatedGraph& repeated);
std::string advice(const RepeatedBlocks& blocks);

}  // namespace tcprof::analysis
