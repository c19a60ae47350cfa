// The CI baseline: a small JSON file committed next to the model code that says, per frame, which
// graph-break sites are expected and how many compiled graphs, recompiles and eager fallbacks the
// workload produces. Files are stored by name only and lines are informational, so the file is
// portable between checkouts and unaffected by edits that only move code (run_sites.h).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_sites.h"

namespace tcprof::cli {

constexpr int kBaselineVersion = 1;

struct Baseline {
  std::string model;                         // file name of the model it was recorded from
  nlohmann::json workload = nlohmann::json::object();  // inputs, vary, iters, seed, ... of the run
  std::vector<FrameView> frames;             // ids are 0; breaks' files are file names
};

Baseline baseline_from_run(const RunView& run);
nlohmann::json baseline_to_json(const Baseline& baseline);
// Throws Error(Input) naming `origin` and what is wrong.
Baseline baseline_from_json(const nlohmann::json& j, const std::string& origin);

// Error(Input) for a missing, unreadable or malformed file.
Baseline load_baseline(const std::string& path);
void save_baseline(const Baseline& baseline, const std::string& path);

}  // namespace tcprof::cli
