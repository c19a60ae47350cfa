// `tcprof import` throughput (issue 14: >= 50 MB/s on one core). Builds a 100+ MB TORCH_TRACE log
// in a temporary folder by concatenating the real fixtures (each copy after the first is a new
// session, as after torch._dynamo.reset()), then times, pinned to one CPU:
//   - md5sum of the same file (the floor: every payload byte goes through MD5 in the import too),
//   - reading records (glog + JSON envelope + MD5 check) alone,
//   - the whole import into a fresh database.
// Usage: import_bench [FIXTURES_DIR] [MIN_MB]
#include <sched.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "importers/trace_import.h"
#include "importers/trace_lines.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

static std::string gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    std::cerr << "cannot open " << path << "\n";
    std::exit(2);
  }
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(gz);
  return out;
}

static double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int main(int argc, char** argv) {
  std::string fixtures = argc > 1 ? argv[1] : TCPROF_TRACE_FIXTURES;
  double min_mb = argc > 2 ? std::atof(argv[2]) : 100.0;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one);  // threads started later (the store's writer) inherit it

  std::string unit = gunzip(fixtures + "/breaks_torch2.11_h100.log.gz") + gunzip(fixtures + "/mlp_torch2.11_h100.log.gz");
  fs::path dir = fs::temp_directory_path() / fmt::format("tcprof-import-bench-{}", getpid());
  fs::create_directories(dir);
  std::string log = (dir / "big.log").string();
  {
    std::ofstream out(log, std::ios::binary);
    size_t written = 0;
    while (written < min_mb * 1e6) {
      out << unit;
      written += unit.size();
    }
  }
  double mb = static_cast<double>(fs::file_size(log)) / 1e6;
  std::cout << fmt::format("log: {:.1f} MB ({} copies of the two fixtures), pinned to CPU 0\n", mb,
                           static_cast<int>(mb * 1e6 / static_cast<double>(unit.size())));

  auto t0 = Clock::now();
  int rc = std::system(("md5sum " + log + " > /dev/null").c_str());
  double md5sum_s = seconds_since(t0);
  if (rc != 0) std::cerr << "md5sum failed\n";

  t0 = Clock::now();
  int64_t records = 0;
  {
    tcprof::import::TraceLineReader reader(log);
    tcprof::import::TraceRecord r;
    while (reader.next(r)) ++records;
  }
  double read_s = seconds_since(t0);

  t0 = Clock::now();
  auto result = tcprof::import::import_traces({{log}, {}, (dir / "bench.db").string()});
  double import_s = seconds_since(t0);

  std::cout << fmt::format("md5sum          {:7.3f} s  {:7.1f} MB/s\n", md5sum_s, mb / md5sum_s);
  std::cout << fmt::format("read records    {:7.3f} s  {:7.1f} MB/s  ({} records, MD5 checked)\n", read_s, mb / read_s, records);
  std::cout << fmt::format("import to db    {:7.3f} s  {:7.1f} MB/s  ({} runs)\n", import_s, mb / import_s, result.runs.size());
  fs::remove_all(dir);
  return 0;
}
