// The CI baseline file (the model and its JSON are analysis/baseline.h): read it with one clear
// error for each way it can be wrong, write it atomically.
#pragma once
#include <string>

#include "analysis/baseline.h"

namespace tcprof::cli {

// Error(Input) for a missing, unreadable or malformed file.
analysis::Baseline load_baseline(const std::string& path);
// Temp file + rename, so a failed write never leaves half a baseline behind.
void save_baseline(const analysis::Baseline& baseline, const std::string& path);

}  // namespace tcprof::cli
