// Writes the GUI demo run: `gui_demo_db OUT.db [--variant a|b] [--calls N] [--kernels-per-call N]`.
// Used for the screenshots in docs/gui and by hand when working on the GUI.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/gui/demo_run.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.db [--variant a|b] [--calls N] [--kernels-per-call N]\n", argv[0]);
    return 2;
  }
  tcprof::gui_test::DemoOptions options;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--variant") options.variant = argv[i + 1][0];
    else if (flag == "--calls") options.calls = std::strtoll(argv[i + 1], nullptr, 10);
    else if (flag == "--kernels-per-call") options.kernels_per_call = std::strtoll(argv[i + 1], nullptr, 10);
  }
  std::remove(argv[1]);
  tcprof::gui_test::write_demo_run(argv[1], options);
  return 0;
}
