// The CI baseline: a small JSON file committed next to the model code that says, per frame, which
// graph-break sites are expected and how many compiled graphs, recompiles and eager fallbacks the
// workload produces. Files are stored by name only and lines are informational, so the file is
// portable between checkouts and unaffected by edits that only move code (break_sites.h).
// Reading and writing the file is the CLI's (cli/baseline.h); this is the model and its JSON.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_view.h"

namespace tcprof::analysis {

constexpr int kBaselineVersion = 1;

struct Baseline {
  std::string model;                                   // file name of the model it was recorded from
  nlohmann::json workload = nlohmann::json::object();  // inputs, vary, iters, seed, ... of the run
  std::vector<FrameView> frames;                       // ids are 0; breaks' files are file names
};

Baseline baseline_from_run(const RunView& run);
nlohmann::json baseline_to_json(const Baseline& baseline);
// Throws Error(Input) naming `origin` and what is wrong.
Baseline baseline_from_json(const nlohmann::json& j, const std::string& origin);

// The parts of a run's configuration that decide how many graphs and recompiles it produces.
nlohmann::json workload_of(const RunRow& run);

}  // namespace tcprof::analysis
