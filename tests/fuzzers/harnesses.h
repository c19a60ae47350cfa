// Coverage-guided fuzzing of every input format a user or a CI job hands tcprof (make fuzz,
// docs/reliability.md). Each harness takes arbitrary bytes as one such input and runs the code that
// reads it. A clear tcprof::Error is the right answer to bad input and is caught; anything else
// that escapes (another exception, a crash, a sanitizer report) is a finding. The same functions
// run over every file of corpus/<name>/ (seeds and the findings kept as regression cases) in the
// regular test suite (regressions_test.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcprof::fuzzers {

using HarnessFn = int (*)(const uint8_t* data, size_t size);

int fuzz_trace_lines(const uint8_t* data, size_t size);   // TORCH_TRACE line reader
int fuzz_torch_trace(const uint8_t* data, size_t size);   // tcprof import of a TORCH_TRACE log
int fuzz_kineto(const uint8_t* data, size_t size);        // tcprof import --kineto of a Chrome trace
int fuzz_input_spec(const uint8_t* data, size_t size);    // --input, --vary and --dynamic
int fuzz_baseline(const uint8_t* data, size_t size);      // check --baseline files
int fuzz_run_db(const uint8_t* data, size_t size);        // a run database, read as report does
int fuzz_kernel_cache(const uint8_t* data, size_t size);  // a cached kernel, its hash, autotune file

// A run database read the way `tcprof report` reads it (every analysis of every run); tcprof::Error
// is the clear answer and is caught.
void read_like_report(const std::string& db);

struct Harness {
  const char* name;  // also the folder of its corpus
  HarnessFn fn;
};
const std::vector<Harness>& harnesses();

}  // namespace tcprof::fuzzers
