// Writes a synthetic but realistic run database: the demo data for `make demo` and for GUI and
// report development before a model has been run. Every row goes through the real RunWriter.
//   tcprof-sample-db OUT.db [--kernels N]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/run_writer.h"
#include "samples/synthetic_run.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.db [--kernels N]\n", argv[0]);
    return 2;
  }
  tcprof::SyntheticRunOptions options;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--kernels") options.kernels = std::strtoll(argv[i + 1], nullptr, 10);
  }
  std::remove(argv[1]);
  tcprof::write_synthetic_run(argv[1], options);
  return 0;
}
