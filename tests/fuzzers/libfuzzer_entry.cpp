// libFuzzer's entry point for one harness (TCPROF_FUZZ_HARNESS names it; tests/fuzzers/CMakeLists.txt
// builds one fuzzer per harness).
#include "tests/fuzzers/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tcprof::fuzzers::TCPROF_FUZZ_HARNESS(data, size);
}
