// tcprof's C++ API (installed as <tcprof/tcprof.h>; CMake: find_package(tcprof), target
// tcprof::tcprof). A program compiles a TorchScript module the way `tcprof run` does, calls it in
// its own loop, and records what happened -- compiles, graph breaks, guards, guard failures,
// recompiles, calls and kernel timings -- into a run database that `tcprof report`, `check`, `diff`
// and tcprof-gui read.
//
//   tcprof::Options options;
//   options.db = "runs/train.db";       // record into this file (created if missing)
//   options.dynamic = {{0, 1}};         // input 0's dimension 1 is symbolic from the start
//   tcprof::Module model = tcprof::Module::load("model.pt", options);
//   for (...) at::Tensor y = model({x}).toTensor();
//   model.finish();                     // the run is `finished` (also on destruction)
//
// Errors are tcprof::Error (core/error.h): kind() Usage or Input for bad options or a bad model,
// Check for what a stance or fullgraph refuses on purpose, Internal for the rest.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include "core/error.h"

namespace tcprof {

struct ModuleOpener;

struct Options {
  // default | force_eager | eager_on_recompile | fail_on_recompile | eager_then_compile
  std::string stance = "default";
  std::string backend = "cpp";  // cpp (generated kernels) | eager (op by op through LibTorch)
  // cpu | cuda | cuda:N: the module is moved there; pass inputs that live there too.
  std::string device = "cpu";
  std::vector<std::pair<int, int>> dynamic;  // (input, dimension) pairs symbolic from the first compile
  bool fullgraph = false;                    // the first graph break is an error (kind Check)
  int recompile_limit = 8;                   // compiles per frame before it runs eagerly
  std::string method = "forward";
  // Where the run is recorded: a SQLite file, created if missing (several processes may write
  // one). Empty: nothing is recorded.
  std::string db;
  std::string profile = "summary";  // kernel timing in the run: off | summary | full
  std::string command = "api";      // the run's `command` column, as `tcprof report` shows it
};

// What the module did so far (the figures `tcprof run` prints).
struct Stats {
  int64_t calls = 0, compiles = 0, recompiles = 0, guard_failures = 0, graph_breaks = 0,
          eager_calls = 0, cache_entries = 0, recompile_limit_hits = 0, compile_failures = 0;
};

class Module {
 public:
  // Loads a TorchScript archive saved with torch.jit.save.
  static Module load(const std::string& path, const Options& options = {});
  // Takes a module already in memory; `name` stands for its path in the run.
  Module(torch::jit::Module module, const Options& options = {}, const std::string& name = "module");
  ~Module();  // finish() unless it ran
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;

  // One call: guards checked, compiled (or recompiled) when none holds, every event recorded.
  c10::IValue operator()(const std::vector<c10::IValue>& inputs);
  // The uncompiled module on the same inputs, for comparisons.
  c10::IValue eager(const std::vector<c10::IValue>& inputs);

  Stats stats() const;
  // Closes the run as `finished` (or `failed`); calling the module afterwards is an error (Usage).
  void finish();
  void fail();
  const std::string& db_path() const;  // "" when nothing is recorded
  int64_t run_id() const;              // the run's id in that file; 0 when nothing is recorded

 private:
  struct State;
  friend struct ModuleOpener;
  explicit Module(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tcprof
