#include "core/run_writer.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/kernel_name.h"
#include "core/schema.h"
#include "core/sqlite_db.h"
#include "core/store_open.h"

namespace tcprof {

namespace {

// Kernel rows go in 16 per statement: SQLite's per-statement overhead dominates narrow rows, and
// multi-row inserts double the rate (measured: ~0.55M -> ~1.1M rows/s here).
constexpr int kKernelColumns = 14;
constexpr int kKernelRowsPerInsert = 16;

std::string kernel_insert_sql(int rows) {
  std::string sql =
      "INSERT INTO kernels(run_id, call_id, graph_id, name, kind, device, stream, start_ns, "
      "duration_ns, grid, block, correlation_id, bytes, mangled_name) VALUES ";
  for (int r = 0; r < rows; ++r) sql += r == 0 ? "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)" : ",(?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  return sql;
}

}  // namespace

// One prepared INSERT per table, owned by the writer thread.
struct RunWriter::Statements {
  explicit Statements(Database& db)
      : frame(db.prepare("INSERT INTO frames(id, run_id, name, module_path, file, line) "
                         "VALUES (?,?,?,?,?,?)")),
        compile(db.prepare("INSERT INTO compiles(id, run_id, frame_id, compile_id, reason, "
                           "start_ns, duration_ns, status, cache_hit, attempt) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?)")),
        phase(db.prepare("INSERT INTO compile_phases(run_id, compile_id, phase, start_ns, "
                         "duration_ns) VALUES (?,?,?,?,?)")),
        graph(db.prepare("INSERT INTO graphs(id, run_id, compile_id, op_count, ir, code, kind, "
                         "fx_key) VALUES (?,?,?,?,?,?,?,?)")),
        graph_break(db.prepare(
            "INSERT INTO graph_breaks(run_id, compile_id, type, break_id, op, reason, hint, file, "
            "line, col, source, module_path, stack_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")),
        guard(db.prepare("INSERT INTO guards(id, run_id, compile_id, kind, expr, file, line) "
                         "VALUES (?,?,?,?,?,?,?)")),
        guard_failure(db.prepare(
            "INSERT INTO guard_failures(run_id, call_id, compile_id, guard_id, expected, actual, "
            "message) VALUES (?,?,?,?,?,?,?)")),
        recompile(db.prepare("INSERT INTO recompiles(run_id, frame_id, compile_id, reason, "
                             "cache_size, call_id) VALUES (?,?,?,?,?,?)")),
        call(db.prepare("INSERT INTO calls(id, run_id, frame_id, compile_id, start_ns, "
                        "duration_ns, path, input_shapes, peak_gpu_bytes) VALUES (?,?,?,?,?,?,?,?,?)")),
        kernel(db.prepare(kernel_insert_sql(1))),
        kernels(db.prepare(kernel_insert_sql(kKernelRowsPerInsert))),
        step(db.prepare("INSERT INTO steps(run_id, step, start_ns, duration_ns, loss, forward_ns, "
                        "backward_ns, optimizer_ns) VALUES (?,?,?,?,?,?,?,?)")),
        hint(db.prepare("INSERT INTO perf_hints(run_id, compile_id, kind, op, message, file, "
                        "line) VALUES (?,?,?,?,?,?,?)")),
        kernel_summary(db.prepare(
            "INSERT INTO kernel_summaries(run_id, call_id, graph_id, name, kind, device, stream, "
            "start_ns, end_ns, count, total_ns, min_ns, max_ns, sum_sq_ns2, bytes, mangled_name) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
        counter(db.prepare("INSERT INTO run_counters(run_id, name, value) VALUES (?,?,?)")),
        source(db.prepare("INSERT INTO sources(run_id, file, sha256, text) VALUES (?,?,?,?)")),
        last_event(db.prepare("UPDATE runs SET last_event_at=? WHERE id=?")) {}

  Statement frame, compile, phase, graph, graph_break, guard, guard_failure, recompile, call,
      kernel, kernels, step, hint, kernel_summary, counter, source, last_event;
};

namespace {

std::string dims_text(const int32_t d[3]) {
  return fmt::format("{},{},{}", d[0], d[1], d[2]);
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

}  // namespace

RunWriter::RunWriter(const std::string& path, const RunInfo& info)
    : RunWriter(path, info, Options{}) {}

RunWriter::RunWriter(const std::string& path, const RunInfo& info, Options options)
    : path_(path), options_(options) {
  db_ = open_store_for_writing(path);
  {
    auto st = db_->prepare(
        "INSERT INTO runs(started_at, command, model_path, model_sha256, stance, config_json, "
        "libtorch_version, device, status, host, pid, source, rank, world_size) "
        "VALUES (?,?,?,?,?,?,?,?,'running',?,?,?,?,?)");
    std::string started = info.started_at.empty() ? iso8601_utc_now() : info.started_at;
    std::string host = host_name();
    st.bind(1, started).bind(2, info.command).bind(3, info.model_path).bind(4, info.model_sha256);
    st.bind(5, info.stance).bind(6, info.config_json).bind(7, info.libtorch_version);
    st.bind(8, info.device).bind(9, host).bind(10, static_cast<int64_t>(getpid()));
    st.bind(11, info.source).bind(12, info.rank).bind(13, info.world_size);
    st.run();
    run_id_ = db_->last_insert_rowid();
  }
  statements_ = std::make_unique<Statements>(*db_);
  intern("");  // id 0 is the empty string, the default of KernelEvent's fields
  thread_ = std::thread([this] { writer_loop(); });
}

RunWriter::~RunWriter() {
  try {
    close("finished");
  } catch (const std::exception& e) {
    fmt::print(stderr, "tcprof: {}\n", e.what());
  }
}

uint32_t RunWriter::intern(std::string_view text) {
  std::lock_guard<std::mutex> lock(intern_mutex_);
  auto it = intern_ids_.find(std::string(text));
  if (it != intern_ids_.end()) return it->second;
  auto id = static_cast<uint32_t>(interned_.size());
  // Demangled here, once per distinct name, so that recording a launch stays a copy of ids.
  std::string shown = demangled_kernel_name(text);
  interned_mangled_.emplace_back(shown == text ? std::string_view() : text);
  interned_.push_back(std::move(shown));
  intern_ids_.emplace(std::string(text), id);
  return id;
}

RunWriter::Shard& RunWriter::my_shard() {
  static std::atomic<size_t> next_thread{0};
  thread_local size_t index = next_thread.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shards_[index];
}

template <typename Push>
void RunWriter::enqueue(Push&& push) {
  Shard& shard = my_shard();
  const size_t shard_limit = std::max<size_t>(1, options_.max_pending_per_thread);
  const size_t wake_at = std::max<size_t>(1, options_.batch_rows / kShards);
  size_t queued;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(shard.mutex);
      queued = shard.events.size() + shard.kernels.size() + shard.summaries.size();
      if (queued < shard_limit || failed_.load(std::memory_order_relaxed)) {
        push(shard);
        ++shard.submitted;
        ++queued;
        break;
      }
    }
    // Backpressure: the writer is far behind. Wait for it rather than drop.
    std::unique_lock<std::mutex> lock(control_mutex_);
    wake_requested_ = true;
    wake_writer_.notify_one();
    progress_.wait_for(lock, std::chrono::milliseconds(5));
  }
  if (queued == wake_at) {
    std::lock_guard<std::mutex> lock(control_mutex_);
    wake_requested_ = true;
    wake_writer_.notify_one();
  }
}

void RunWriter::push(Event e) {
  enqueue([&](Shard& shard) { shard.events.push_back(std::move(e)); });
}

void RunWriter::record(const KernelEvent& e) {
  enqueue([&](Shard& shard) { shard.kernels.push_back(e); });
}

void RunWriter::record(const KernelSummaryEvent& e) {
  enqueue([&](Shard& shard) { shard.summaries.push_back(e); });
}

void RunWriter::flush() {
  std::unique_lock<std::mutex> lock(control_mutex_);
  if (!thread_.joinable() || closed_) return;
  uint64_t generation = ++flush_requested_;
  wake_writer_.notify_one();
  progress_.wait(lock, [&] { return flush_completed_ >= generation || !write_error_.empty(); });
}

uint64_t RunWriter::committed_events() const {
  std::lock_guard<std::mutex> lock(control_mutex_);
  return committed_;
}

bool RunWriter::flush_for(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(control_mutex_);
  if (!thread_.joinable() || closed_) return true;
  uint64_t generation = ++flush_requested_;
  wake_writer_.notify_one();
  return progress_.wait_for(lock, limit, [&] {
    return flush_completed_ >= generation || !write_error_.empty();
  });
}

void RunWriter::mark_interrupted(std::chrono::milliseconds flush_limit) noexcept {
  try {
    flush_for(flush_limit);
    // A connection of its own: the writer thread owns db_ and may still be inside a batch.
    Database db(path_, Database::Mode::ReadWriteCreate);
    auto st = db.prepare("UPDATE runs SET status='interrupted', finished_at=? WHERE id=?");
    const std::string finished = iso8601_utc_now();
    st.bind(1, finished).bind(2, run_id_).run();
  } catch (...) {
    // Nothing more can be done on the way out; readers infer `interrupted` from the dead pid.
  }
}

void RunWriter::close(const std::string& status) {
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (closed_) return;
    closed_ = true;
    stopping_ = true;
  }
  wake_writer_.notify_one();
  if (thread_.joinable()) thread_.join();
  uint64_t submitted = 0;
  for (auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    submitted += shard.submitted;
  }
  std::string error;
  uint64_t committed;
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    error = write_error_;
    committed = committed_;
  }
  try {
    auto st = db_->prepare("UPDATE runs SET status=?, finished_at=?, dropped_events=? WHERE id=?");
    const std::string finished = iso8601_utc_now();
    const std::string final_status = error.empty() ? status : std::string("failed");
    st.bind(1, final_status).bind(2, finished);
    st.bind(3, static_cast<int64_t>(submitted - committed)).bind(4, run_id_).run();
  } catch (const Error& e) {
    if (error.empty()) error = e.what();
  }
  statements_.reset();
  db_.reset();
  if (!error.empty()) {
    throw Error(ErrorKind::Internal,
                fmt::format("writing run data to '{}' failed: {}", path_, error));
  }
}

void RunWriter::writer_loop() {
  std::vector<Event> events;
  std::vector<KernelEvent> kernels;
  std::vector<Event> taken_events[kShards];
  std::vector<KernelEvent> taken_kernels[kShards];
  std::vector<KernelSummaryEvent> summaries;
  std::vector<KernelSummaryEvent> taken_summaries[kShards];
  for (;;) {
    uint64_t generation;
    bool stop;
    {
      std::unique_lock<std::mutex> lock(control_mutex_);
      wake_writer_.wait_for(lock, options_.flush_interval, [&] {
        return stopping_ || wake_requested_ || flush_requested_ > flush_completed_;
      });
      wake_requested_ = false;
      generation = flush_requested_;
      stop = stopping_;
    }
    // Take every shard's queue; swapping hands the shard back an empty vector that keeps the
    // capacity of an earlier batch, so steady-state recording does not allocate.
    size_t pending = 0;
    for (size_t i = 0; i < kShards; ++i) {
      std::lock_guard<std::mutex> lock(shards_[i].mutex);
      taken_events[i].swap(shards_[i].events);
      taken_kernels[i].swap(shards_[i].kernels);
      taken_summaries[i].swap(shards_[i].summaries);
      pending += taken_events[i].size() + taken_kernels[i].size() + taken_summaries[i].size();
    }
    std::string error;
    uint64_t written = 0;
    if (pending > 0) {
      for (size_t i = 0; i < kShards; ++i) {
        for (auto& e : taken_events[i]) events.push_back(std::move(e));
        kernels.insert(kernels.end(), taken_kernels[i].begin(), taken_kernels[i].end());
        taken_events[i].clear();
        taken_kernels[i].clear();
        summaries.insert(summaries.end(), taken_summaries[i].begin(), taken_summaries[i].end());
        taken_summaries[i].clear();
      }
      if (!failed_.load()) {
        try {
          written = write_batch(events, kernels, summaries);
        } catch (const std::exception& e) {
          error = e.what();
          failed_.store(true);
        }
      }
      events.clear();
      kernels.clear();
      summaries.clear();
    }
    {
      std::lock_guard<std::mutex> lock(control_mutex_);
      if (!error.empty() && write_error_.empty()) write_error_ = error;
      committed_ += written;
      flush_completed_ = std::max(flush_completed_, generation);
    }
    progress_.notify_all();
    if (stop && pending == 0) return;
  }
}

uint64_t RunWriter::write_batch(std::vector<Event>& events, std::vector<KernelEvent>& kernels,
                                std::vector<KernelSummaryEvent>& summaries) {
  Statements& s = *statements_;
  const Id run = run_id_;
  Transaction tx(*db_);
  for (auto& ev : events) {
    std::visit(
        [&](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, FrameEvent>) {
            s.frame.bind(1, e.id).bind(2, run).bind(3, e.name).bind(4, e.module_path);
            s.frame.bind(5, e.file).bind(6, e.line).run();
          } else if constexpr (std::is_same_v<T, CompileEvent>) {
            s.compile.bind(1, e.id).bind(2, run).bind(3, e.frame_id).bind(4, e.compile_id);
            s.compile.bind(5, e.reason).bind(6, e.start_ns).bind(7, e.duration_ns);
            s.compile.bind(8, e.status).bind(9, e.cache_hit ? 1 : 0).bind(10, e.attempt).run();
          } else if constexpr (std::is_same_v<T, CompilePhaseEvent>) {
            s.phase.bind(1, run).bind(2, e.compile_id).bind(3, e.phase).bind(4, e.start_ns);
            s.phase.bind(5, e.duration_ns).run();
          } else if constexpr (std::is_same_v<T, GraphEvent>) {
            s.graph.bind(1, e.id).bind(2, run).bind(3, e.compile_id).bind(4, e.op_count);
            s.graph.bind(5, e.ir).bind(6, e.code).bind(7, e.kind);
            if (e.fx_key.empty()) s.graph.bind_null(8);
            else s.graph.bind(8, e.fx_key);
            s.graph.run();
          } else if constexpr (std::is_same_v<T, GraphBreakEvent>) {
            s.graph_break.bind(1, run).bind(2, e.compile_id).bind(3, e.type).bind(4, e.break_id);
            s.graph_break.bind(5, e.op).bind(6, e.reason).bind(7, e.hint).bind(8, e.file);
            s.graph_break.bind(9, e.line).bind(10, e.col).bind(11, e.source);
            s.graph_break.bind(12, e.module_path).bind(13, e.stack_json).run();
          } else if constexpr (std::is_same_v<T, GuardEvent>) {
            s.guard.bind(1, e.id).bind(2, run).bind(3, e.compile_id).bind(4, e.kind);
            s.guard.bind(5, e.expr).bind(6, e.file).bind(7, e.line).run();
          } else if constexpr (std::is_same_v<T, GuardFailureEvent>) {
            s.guard_failure.bind(1, run).bind(2, e.call_id).bind(3, e.compile_id);
            s.guard_failure.bind(4, e.guard_id).bind(5, e.expected).bind(6, e.actual);
            s.guard_failure.bind(7, e.message).run();
          } else if constexpr (std::is_same_v<T, RecompileEvent>) {
            s.recompile.bind(1, run).bind(2, e.frame_id).bind(3, e.compile_id);
            s.recompile.bind(4, e.reason).bind(5, e.cache_size).bind(6, e.call_id).run();
          } else if constexpr (std::is_same_v<T, CallEvent>) {
            s.call.bind(1, e.id).bind(2, run).bind(3, e.frame_id).bind(4, e.compile_id);
            s.call.bind(5, e.start_ns).bind(6, e.duration_ns).bind(7, e.path);
            s.call.bind(8, e.input_shapes);
            if (e.peak_gpu_bytes > 0) {
              s.call.bind(9, e.peak_gpu_bytes);
            } else {
              s.call.bind_null(9);
            }
            s.call.run();
          } else if constexpr (std::is_same_v<T, StepEvent>) {
            s.step.bind(1, run).bind(2, e.step).bind(3, e.start_ns).bind(4, e.duration_ns);
            s.step.bind(5, e.loss);
            auto phase = [&](int index, int64_t ns) {
              if (ns > 0) {
                s.step.bind(index, ns);
              } else {
                s.step.bind_null(index);
              }
            };
            phase(6, e.forward_ns);
            phase(7, e.backward_ns);
            phase(8, e.optimizer_ns);
            s.step.run();
          } else if constexpr (std::is_same_v<T, PerfHintEvent>) {
            s.hint.bind(1, run).bind(2, e.compile_id).bind(3, e.kind).bind(4, e.op);
            s.hint.bind(5, e.message).bind(6, e.file).bind(7, e.line).run();
          } else if constexpr (std::is_same_v<T, CounterEvent>) {
            s.counter.bind(1, run).bind(2, e.name).bind(3, e.value).run();
          } else if constexpr (std::is_same_v<T, SourceEvent>) {
            s.source.bind(1, run).bind(2, e.file).bind(3, e.sha256).bind(4, e.text).run();
          }
        },
        ev);
  }
  write_kernels(kernels);
  write_summaries(summaries);
  const std::string now = iso8601_utc_now();
  s.last_event.bind(1, now).bind(2, run).run();
  tx.commit();
  return events.size() + kernels.size() + summaries.size();
}

RunWriter::InternedTexts RunWriter::interned_snapshot() {
  // The deques' elements never move, so the pointers stay valid while other threads intern more.
  std::lock_guard<std::mutex> lock(intern_mutex_);
  InternedTexts texts;
  texts.text.reserve(interned_.size());
  texts.mangled.reserve(interned_.size());
  for (size_t i = 0; i < interned_.size(); ++i) {
    texts.text.push_back(&interned_[i]);
    texts.mangled.push_back(&interned_mangled_[i]);
  }
  return texts;
}

namespace {
// Binds an interned mangled name, or NULL where the name was not mangled.
void bind_mangled(Statement& st, int column, const RunWriter::InternedTexts& texts, uint32_t id) {
  if (id < texts.mangled.size() && !texts.mangled[id]->empty()) {
    st.bind(column, std::string_view(*texts.mangled[id]));
  } else {
    st.bind_null(column);
  }
}
}  // namespace

void RunWriter::write_summaries(const std::vector<KernelSummaryEvent>& summaries) {
  if (summaries.empty()) return;
  const InternedTexts texts = interned_snapshot();
  auto name = [&](uint32_t id) -> std::string_view {
    return id < texts.text.size() ? std::string_view(*texts.text[id]) : std::string_view("?");
  };
  Statement& st = statements_->kernel_summary;
  for (const auto& e : summaries) {
    st.bind(1, run_id_).bind(2, e.call_id).bind(3, e.graph_id).bind(4, name(e.name_id));
    st.bind(5, name(e.kind_id)).bind(6, name(e.device_id)).bind(7, e.stream);
    st.bind(8, e.start_ns).bind(9, e.end_ns).bind(10, e.count).bind(11, e.total_ns);
    st.bind(12, e.min_ns).bind(13, e.max_ns).bind(14, e.sum_sq_ns2);
    if (e.bytes != 0) {
      st.bind(15, e.bytes);
    } else {
      st.bind_null(15);
    }
    bind_mangled(st, 16, texts, e.name_id);
    st.execute();
  }
}

void RunWriter::write_kernels(const std::vector<KernelEvent>& kernels) {
  if (kernels.empty()) return;
  const InternedTexts texts = interned_snapshot();
  auto name = [&](uint32_t id) -> std::string_view {
    return id < texts.text.size() ? std::string_view(*texts.text[id]) : std::string_view("?");
  };
  // grid/block text must outlive the statement step: one slot per row of the multi-row insert.
  std::string grid[kKernelRowsPerInsert], block[kKernelRowsPerInsert];
  auto bind_row = [&](Statement& st, int row, const KernelEvent& k) {
    int o = row * kKernelColumns;
    st.bind(o + 1, run_id_).bind(o + 2, k.call_id).bind(o + 3, k.graph_id);
    st.bind(o + 4, name(k.name_id)).bind(o + 5, name(k.kind_id)).bind(o + 6, name(k.device_id));
    st.bind(o + 7, k.stream).bind(o + 8, k.start_ns).bind(o + 9, k.duration_ns);
    if (k.grid[0] != 0) {
      grid[row] = dims_text(k.grid);
      block[row] = dims_text(k.block);
      st.bind(o + 10, grid[row]).bind(o + 11, block[row]);
    } else {
      st.bind_null(o + 10).bind_null(o + 11);
    }
    if (k.correlation_id != 0) {
      st.bind(o + 12, k.correlation_id);
    } else {
      st.bind_null(o + 12);
    }
    if (k.bytes != 0) {
      st.bind(o + 13, k.bytes);
    } else {
      st.bind_null(o + 13);
    }
    bind_mangled(st, o + 14, texts, k.name_id);
  };
  Statements& s = *statements_;
  size_t i = 0;
  for (; i + kKernelRowsPerInsert <= kernels.size(); i += kKernelRowsPerInsert) {
    for (int r = 0; r < kKernelRowsPerInsert; ++r) bind_row(s.kernels, r, kernels[i + static_cast<size_t>(r)]);
    s.kernels.execute();
  }
  for (; i < kernels.size(); ++i) {
    bind_row(s.kernel, 0, kernels[i]);
    s.kernel.execute();
  }
}

}  // namespace tcprof
