// SIGINT, SIGTERM and SIGHUP as an orderly stop for a command-line process: every registered
// action runs (mark the run `interrupted`, commit what was recorded) and the process exits with
// 128 + the signal number, as a shell reports a killed job.
//
// The signals are blocked in every thread and taken by one watcher thread with sigwait(), so the
// actions run as ordinary code (locks, SQLite) rather than inside a signal handler.
#pragma once
#include <functional>

namespace tcprof::interrupt {

// Call first in main(), before any thread starts: threads inherit the blocked mask. Idempotent.
void install();

// Runs `action(signal)` on the watcher thread when a signal arrives, newest registration first,
// until the Registration is destroyed. Without install() nothing is registered (library users
// keep their own signal handling).
class Registration {
 public:
  Registration() = default;
  explicit Registration(std::function<void(int)> action);
  ~Registration();
  Registration(Registration&& other) noexcept;
  Registration& operator=(Registration&& other) noexcept;
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

 private:
  int id_ = 0;
};

}  // namespace tcprof::interrupt
