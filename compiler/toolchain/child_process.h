// Runs the C++ compiler as a child that cannot outlive tcprof.
//
// The compiler runs under a small guardian process: the guardian leads a new process group (so a
// timeout kills the driver and everything it started: cc1plus, as, ld) and asks the kernel to
// signal it when tcprof dies (PR_SET_PDEATHSIG). On that signal it removes the half-written output
// and kills its whole group, so a tcprof killed with SIGKILL leaves no compiler running and no
// temporary library behind.
#pragma once
#include <string>
#include <vector>

namespace tcprof {

struct ProcessResult {
  int spawn_errno = 0;  // the program could not be started (errno); nothing ran
  int status = 0;       // waitpid status of the program
  bool timed_out = false;
  std::string output;   // stdout and stderr, interleaved, at most max_output bytes
  double seconds = 0;
};

struct ProcessOptions {
  double timeout_s = 300;
  size_t max_output = 1 << 20;  // compiler output kept for the error (template spew is huge)
  std::string remove_if_orphaned;  // a file the guardian deletes when tcprof dies mid-run
};

// Runs argv[0] (a path) with argv; stdin from /dev/null, stdout+stderr captured. Blocks until the
// program ends or times out. Thread-safe.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options);

}  // namespace tcprof
