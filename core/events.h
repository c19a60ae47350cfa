// The event model: one plain struct per kind of thing tcprof records (PRODUCT.md, "Database").
// No LibTorch types here; the compiler and profiler translate into these.
//
// Ids: entities that other events refer to (frames, compiles, graphs, guards, calls) get their id
// from RunWriter::next_id(), which is unique across runs in one file without coordinating with
// other processes (see run_writer.h). Events nothing refers to get their id from SQLite.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace tcprof {

using Id = int64_t;

struct RunInfo {
  std::string command;           // e.g. "run", "train", "explain"
  std::string model_path;
  std::string model_sha256;
  std::string stance = "default";
  std::string config_json = "{}";  // the whole configuration of the run
  std::string libtorch_version;
  std::string device = "cpu";
  std::string started_at;        // ISO-8601 UTC; filled with the current time when empty
  std::string source = "tcprof";  // who recorded it: tcprof (a run of its own) | torch_trace (imported)
  int rank = 0;                   // torch.distributed rank of an imported run; 0 otherwise
  int world_size = 1;
};

struct FrameEvent {
  Id id = 0;
  std::string name;         // e.g. "forward"
  std::string module_path;  // e.g. "blocks.2.attn"; empty for the root module
  std::string file;
  int line = 0;
};

struct CompileEvent {
  Id id = 0;
  Id frame_id = 0;
  // "F/C", like Dynamo's "0/1": frame F's C-th compile (C counts recompiles of the frame, not
  // attempts).
  std::string compile_id;
  std::string reason;      // why this compile happened ("first call", or the recompile reason)
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  // ok | failed | compile_failed | eager | incomplete (started, never finished: the job died)
  std::string status = "ok";
  bool cache_hit = false;
  // Restarts of this compile after a graph break (Dynamo's `attempt`): the kept graph, guards and
  // code are the last attempt's. tcprof's own capture never restarts, so 0 for its runs.
  int attempt = 0;
};

struct CompilePhaseEvent {
  Id compile_id = 0;
  std::string phase;  // capture, decompose, lower, schedule, codegen, cc, load, ...
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
};

struct GraphEvent {
  Id id = 0;
  Id compile_id = 0;
  int op_count = 0;
  std::string ir;
  std::string code;
  // What stage the graph is: "captured" for tcprof's own; an import keeps PyTorch's stages
  // (dynamo, aot_forward, aot_backward, aot_joint, inductor_post_grad, ddp_split).
  std::string kind = "captured";
  std::string fx_key = "";  // the FX graph cache key an import joins Kineto annotations on
};

// A user source file as the model's debug info (or an imported log) carried it, so readers show
// source without the model file. `sha256` is of `text`.
struct SourceEvent {
  std::string file;
  std::string sha256;
  std::string text;
};

struct GraphBreakEvent {
  Id compile_id = 0;
  std::string type;      // side_effect, data_dependent_branch, ... (PRODUCT.md)
  std::string break_id;  // stable registry id such as TCB0003
  std::string op;
  std::string reason;
  std::string hint;
  std::string file;
  int line = 0;
  int col = 0;
  std::string source;       // the user's source line text
  std::string module_path;
  std::string stack_json = "[]";
};

struct GuardEvent {
  Id id = 0;
  Id compile_id = 0;
  std::string kind;  // dtype, device, rank, size, stride, requires_grad, scalar, attr, grad_mode, shape_expr
  std::string expr;
  std::string file;
  int line = 0;
};

struct GuardFailureEvent {
  Id call_id = 0;
  Id compile_id = 0;
  Id guard_id = 0;
  std::string expected;
  std::string actual;
  std::string message;
};

struct RecompileEvent {
  Id frame_id = 0;
  Id call_id = 0;  // the call whose guard failures forced it
  Id compile_id = 0;
  std::string reason;
  int cache_size = 0;  // entries in the frame's cache before this compile
};

struct CallEvent {
  Id id = 0;
  Id frame_id = 0;
  Id compile_id = 0;        // the cache entry that served the call; 0 when it ran eagerly
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  std::string path;          // compiled | eager | fallback
  std::string input_shapes;  // JSON, e.g. [[8,3,224,224],[4]]; feeds shape advice
  // The CUDA caching allocator's peak during the call (its peak is reset when the call starts);
  // 0 when the call ran on no GPU.
  int64_t peak_gpu_bytes = 0;
};

// Kernels are the hot path (up to millions per run): the name is an interned id from
// RunWriter::intern() so that recording one is a copy of a small POD.
struct KernelEvent {
  Id call_id = 0;
  Id graph_id = 0;
  uint32_t name_id = 0;
  uint32_t kind_id = 0;    // interned: generated, extern, fallback, eager, guard, gpu, memcpy, ...
  uint32_t device_id = 0;  // interned: "cpu", "cuda:0"
  int32_t stream = 0;      // thread index for CPU, stream id for GPU
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int64_t correlation_id = 0;
  int64_t bytes = 0;  // a copy's or fill's size; 0 for kernels
};

struct StepEvent {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  std::optional<double> loss;
  // Where the step's time went (0: not recorded). forward includes the loss; on a GPU each phase
  // ends with a device synchronisation so it is the phase's GPU time too.
  int64_t forward_ns = 0, backward_ns = 0, optimizer_ns = 0;
};

// Advice that is not a break: an op with no lowering running as a fallback kernel, autograd
// forcing the eager backend, and the like.
struct PerfHintEvent {
  Id compile_id = 0;
  std::string kind;
  std::string op;
  std::string message;
  std::string file;
  int line = 0;
};

// --profile summary: the launches of one kernel name in one call window, folded into one row
// (count, total, min, max and the sum of squares so that the standard deviation stays exact).
// Names are interned like KernelEvent's.
struct KernelSummaryEvent {
  Id call_id = 0;
  Id graph_id = 0;
  uint32_t name_id = 0;
  uint32_t kind_id = 0;
  uint32_t device_id = 0;
  int32_t stream = 0;
  int64_t start_ns = 0;  // first launch's start
  int64_t end_ns = 0;    // last launch's end
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double sum_sq_ns2 = 0;  // sum of squared durations, ns^2
  int64_t bytes = 0;      // copies and fills: bytes of all `count` launches
};

// A named per-run counter such as "cupti.dropped_records". Rows are deltas: readers sum them per
// name, so a collector can record as it goes and a killed job keeps what it counted.
struct CounterEvent {
  std::string name;
  int64_t value = 0;
};

}  // namespace tcprof
