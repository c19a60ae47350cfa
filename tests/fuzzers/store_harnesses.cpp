// The harnesses of the binary formats: run databases and the kernel cache's files (harnesses.h).
#include <filesystem>
#include <string>

#include "analysis/break_sites.h"
#include "analysis/kernel_stats.h"
#include "analysis/recompiles.h"
#include "analysis/run_summary.h"
#include "analysis/run_view.h"
#include "compiler/backends/cpp/run/autotune_cache.h"
#include "compiler/toolchain/cache_files.h"
#include "core/error.h"
#include "core/run_reader.h"
#include "tests/fuzzers/harness_support.h"
#include "tests/fuzzers/harnesses.h"

namespace tcprof::fuzzers {

void read_like_report(const std::string& db) {
  try {
    RunReader reader(db);
    for (const RunRow& run : reader.runs()) {
      analysis::summarize_run(reader, run.id);
      analysis::view_run(reader, run.id);
      analysis::break_sites(reader, run.id);
      analysis::recompiles_with_failures(reader, run.id);
      analysis::kernel_stats(reader, run.id);
      reader.counters(run.id);
      reader.sources(run.id);
      reader.steps(run.id);
      reader.perf_hints(run.id);
      reader.graph_kernel_times(run.id);
    }
  } catch (const Error&) {
  }
}

// Damaged SQLite files (the seeds are real run databases): read as report and the GUI read them.
int fuzz_run_db(const uint8_t* data, size_t size) {
  fresh_path("run.db");
  read_like_report(write_input("run.db", data, size));
  return 0;
}

// The same bytes as a cached kernel library, as the hash file beside it, and as an autotune
// decision file: checked and read as a warm start does before trusting any of them.
int fuzz_kernel_cache(const uint8_t* data, size_t size) {
  const std::string library = write_input("kernel.so", data, size);
  (void)elf_problem(library);
  (void)library_hash_problem(library);
  write_input("kernel.so.sha256", data, size);
  (void)library_hash_problem(library);
  const std::string cache = fresh_path("cache");
  const std::string key(64, 'a');
  std::filesystem::create_directories(cache + "/autotune/aa");
  write_input("cache/autotune/aa/" + key + ".txt", data, size);
  for (size_t count : {0, 1, 4}) (void)load_autotune(cache, key, count);
  return 0;
}

const std::vector<Harness>& harnesses() {
  static const std::vector<Harness> all = {
      {"trace_lines", fuzz_trace_lines}, {"torch_trace", fuzz_torch_trace},   {"kineto", fuzz_kineto},
      {"input_spec", fuzz_input_spec},   {"baseline", fuzz_baseline},         {"run_db", fuzz_run_db},
      {"kernel_cache", fuzz_kernel_cache},
  };
  return all;
}

}  // namespace tcprof::fuzzers
