// RunWriter records one run into a tcprof database while the job runs.
//
// Callers on any thread hand it events; record() only appends to an in-memory queue (no I/O, no
// SQLite) so instrumented code is not slowed down. A background thread commits the queue in
// batched transactions: every `batch_rows` events or every `flush_interval`, whichever comes
// first. A process that dies keeps every committed batch; its run says `interrupted` (marked on
// SIGINT/SIGTERM, or inferred by readers when the recorded pid is gone).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/events.h"

namespace tcprof {

class Database;

class RunWriter {
 public:
  struct Options {
    size_t batch_rows = 10000;
    std::chrono::milliseconds flush_interval{100};
    // When one thread's queue holds this many events, record() waits for the writer: memory
    // stays bounded (about 90 MB of kernel events per recording thread) and nothing is dropped.
    size_t max_pending_per_thread = size_t{1} << 20;
  };

  // Opens or creates `path` (WAL, synchronous=NORMAL), validates or creates the schema and
  // inserts the run row with status `running`. Throws Error(Input) naming the file on failure.
  RunWriter(const std::string& path, const RunInfo& info);
  RunWriter(const std::string& path, const RunInfo& info, Options options);
  ~RunWriter();  // close("finished") unless closed already
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  Id run_id() const { return run_id_; }
  const std::string& path() const { return path_; }

  // A fresh id for a frame, compile, graph, guard or call. Ids are (run_id << 32) + n, so they
  // are unique in the file even when two processes write to it at once.
  Id next_id() { return (run_id_ << 32) + next_local_id_.fetch_add(1, std::memory_order_relaxed); }

  // Interns a kernel name, kind or device for KernelEvent. Thread-safe; cache the result. A mangled
  // C++ name is written demangled, with the original in the row's mangled_name.
  uint32_t intern(std::string_view text);
  // Pointers to the interned texts as written (demangled) and to the mangled originals (empty
  // where the text was not mangled), indexed by interned id.
  struct InternedTexts {
    std::vector<const std::string*> text, mangled;
  };

  void record(FrameEvent e) { push(std::move(e)); }
  void record(CompileEvent e) { push(std::move(e)); }
  void record(CompilePhaseEvent e) { push(std::move(e)); }
  void record(GraphEvent e) { push(std::move(e)); }
  void record(GraphBreakEvent e) { push(std::move(e)); }
  void record(GuardEvent e) { push(std::move(e)); }
  void record(GuardFailureEvent e) { push(std::move(e)); }
  void record(RecompileEvent e) { push(std::move(e)); }
  void record(CallEvent e) { push(std::move(e)); }
  void record(StepEvent e) { push(std::move(e)); }
  void record(PerfHintEvent e) { push(std::move(e)); }
  void record(const KernelEvent& e);
  void record(const KernelSummaryEvent& e);
  void record(CounterEvent e) { push(std::move(e)); }
  void record(SourceEvent e) { push(std::move(e)); }

  // Blocks until everything recorded before the call is committed.
  void flush();
  // flush() that gives up after `limit`; false when it did.
  bool flush_for(std::chrono::milliseconds limit);
  // For a process about to exit on SIGINT/SIGTERM: commits what is queued (waiting at most
  // `flush_limit`) and marks the run `interrupted` through a connection of its own. Callable from
  // any thread while others still record; the writer is not stopped (the process is exiting).
  void mark_interrupted(std::chrono::milliseconds flush_limit) noexcept;
  // Flushes, marks the run with `status` (finished, failed, interrupted) and stops the thread.
  // Throws Error(Internal) if the background thread could not write (disk full, I/O error).
  void close(const std::string& status = "finished");

  uint64_t committed_events() const;

 private:
  using Event = std::variant<FrameEvent, CompileEvent, CompilePhaseEvent, GraphEvent,
                             GraphBreakEvent, GuardEvent, GuardFailureEvent, RecompileEvent,
                             CallEvent, StepEvent, PerfHintEvent, CounterEvent, SourceEvent>;
  struct Statements;
  // Queues are sharded by thread so that recording threads rarely share a lock or a cache line.
  struct alignas(64) Shard {
    std::mutex mutex;
    std::vector<Event> events;
    std::vector<KernelEvent> kernels;
    std::vector<KernelSummaryEvent> summaries;  // PODs like kernels: one per name per call
    uint64_t submitted = 0;
  };
  static constexpr size_t kShards = 8;

  void push(Event e);
  Shard& my_shard();
  template <typename Push>
  void enqueue(Push&& push);
  void writer_loop();
  uint64_t write_batch(std::vector<Event>& events, std::vector<KernelEvent>& kernels,
                       std::vector<KernelSummaryEvent>& summaries);
  void write_kernels(const std::vector<KernelEvent>& kernels);
  void write_summaries(const std::vector<KernelSummaryEvent>& summaries);
  InternedTexts interned_snapshot();

  std::string path_;
  Options options_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<Statements> statements_;
  Id run_id_ = 0;
  std::atomic<int64_t> next_local_id_{1};
  Shard shards_[kShards];

  // Control state shared by callers, flush() and the writer thread.
  mutable std::mutex control_mutex_;
  std::condition_variable wake_writer_;
  std::condition_variable progress_;  // a batch was committed or queues were emptied
  uint64_t flush_requested_ = 0;      // generation counters: flush() waits for its generation
  uint64_t flush_completed_ = 0;
  uint64_t committed_ = 0;
  bool wake_requested_ = false;
  bool stopping_ = false;
  std::atomic<bool> failed_{false};
  bool closed_ = false;
  std::string write_error_;

  std::mutex intern_mutex_;
  std::unordered_map<std::string, uint32_t> intern_ids_;
  std::deque<std::string> interned_;  // deque: element addresses stay valid as it grows
  std::deque<std::string> interned_mangled_;  // the original of a demangled text; else empty

  std::thread thread_;
};

}  // namespace tcprof
