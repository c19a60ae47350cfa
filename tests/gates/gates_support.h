// Helpers for the gate tests: run the tcprof binary on the sample models.
#pragma once
#include <string>

#include "tests/test_support.h"

namespace tcprof::testing {

inline std::string sample_model(const std::string& name) {
  return std::string(TCPROF_SAMPLES_DIR) + "/" + name + ".pt";
}

// `tcprof ARGS` with stdout captured; stderr too when `merge_stderr`.
// Output is wrapped to $COLUMNS: tests read it at 80, whatever terminal runs them.
inline CommandResult tcprof(const std::string& args, bool merge_stderr = false) {
  return run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " " + args, merge_stderr);
}

// Records gate_base's workload and writes its baseline; returns the baseline path.
inline std::string write_base_baseline(const TempDir& dir, const std::string& extra = "") {
  std::string baseline = dir.file("baseline.json");
  auto r = tcprof("check " + sample_model("gate_base") + " --input 'f32[4,8]' --iters 4 " + extra +
                  " --baseline " + baseline + " --update-baseline --db " + dir.file("base.db") + " 2>&1");
  if (r.exit_code != 0) return "";
  return baseline;
}

inline int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace tcprof::testing
