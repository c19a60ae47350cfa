// Steps every code-generating backend's driver takes the same way (cpp and cuda): the example run
// that teaches shapes, the reasons a graph runs eagerly, the IR record of a scheduled program, the
// report's counts and hints, and the phase clock.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "compiler/backends/cpp/schedule/schedule_fusion.h"
#include "core/clock.h"

namespace tcprof {

// Times the compile's phases into the report: begin() ends the open phase and starts the next.
class Phases {
 public:
  explicit Phases(CompileReport& r) : r_(r) {}
  void begin(const char* name) {
    end();
    r_.phases.push_back({name, now_ns(), 0});
    open_ = true;
  }
  void end() {
    if (open_) r_.phases.back().duration_ns = now_ns() - r_.phases.back().start_ns;
    open_ = false;
  }

 private:
  CompileReport& r_;
  bool open_ = false;
};

// A compiled graph with a backend's report: generated kernels, or the eager backend's graph when
// it could not be compiled (the report says why).
class ReportedGraph : public CompiledGraph {
 public:
  using Runner = std::function<std::vector<c10::IValue>(const std::vector<c10::IValue>&, int64_t)>;
  ReportedGraph(Runner run, CompileReport report) : run_(std::move(run)) { report_ = std::move(report); }
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id) override {
    return run_(inputs, graph_id);
  }

 private:
  Runner run_;
};

// TCPROF_LOGS=passes: the graph after one pass.
void log_graph(const char* step, const CapturedGraph& g, int changed);

struct PassContext;
// The graph passes of an inference graph, in order (simplify, functionalize, fold constants, fold
// batch norm, simplify), each logged.
void run_inference_passes(PassContext& ctx);

// Every slot's value for the example inputs: the capture run's, when the frontend kept them, else
// one run of the graph (inputs cloned and the random generator restored, so that the run changes
// nothing the user can see).
std::vector<c10::IValue> example_run(const CapturedGraph& g, const std::vector<c10::IValue>& inputs);

// Why the graph needs autograd (an input or a parameter requires grad under grad mode), or empty.
std::string autograd_reason(const CapturedGraph& g, const std::vector<c10::IValue>& inputs);

// Why the graph must run op by op through LibTorch (it updates module state), or empty.
std::string module_state_reason(const CapturedGraph& g);

// The IR record: the graph, its steps and its kernels.
std::string program_ir(const CapturedGraph& g, const ScheduledProgram& s);

// TCPROF_LOGS=perf_hints: each distinct hint of a graph once.
void log_hints(const std::vector<PerfHint>& hints);

PerfHint hint(std::string kind, const GraphOp* op, std::string message);

// The graph run op by op through LibTorch (the eager backend), with `report` saying why; its hints
// logged.
std::unique_ptr<CompiledGraph> eager_with_report(const CapturedGraph& g, CpuProfiler* profiler, CompileReport report);

// The report's counts (kernels, fused ops, extern and fallback calls), kernel groups and the
// fallback hints of a scheduled program.
void summarize(const CapturedGraph& g, const ScheduledProgram& s, CompileReport& report);

}  // namespace tcprof
