#include "compiler/toolchain/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

extern char** environ;

namespace tcprof {
namespace {

using Clock = std::chrono::steady_clock;

// What the guardian and the program report on the status pipe: one fixed-size record each
// (smaller than PIPE_BUF, so each write is atomic).
struct StatusRecord {
  enum Kind : int { ExecFailed = 1, Exited = 2 };
  int kind;
  int value;  // errno for ExecFailed, the waitpid status for Exited
};

void write_record(int fd, StatusRecord::Kind kind, int value) {
  StatusRecord r{kind, value};
  while (::write(fd, &r, sizeof r) < 0 && errno == EINTR) {
  }
}

// Everything the forked processes need, prepared before fork(): after it, in a multi-threaded
// parent, only async-signal-safe calls are allowed (no allocation, no locks).
struct Launch {
  std::vector<char*> argv;
  const char* remove_if_orphaned;  // null: nothing to remove
  pid_t parent;
  int devnull, output_fd, status_fd;
};

// The program: default signal state, dies with its guardian, output into the pipe.
[[noreturn]] void exec_program(const Launch& l) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::dup2(l.devnull, 0);
  ::dup2(l.output_fd, 1);
  ::dup2(l.output_fd, 2);
  ::execve(l.argv[0], l.argv.data(), environ);
  write_record(l.status_fd, StatusRecord::ExecFailed, errno);
  ::_exit(127);
}

// The guardian: leads the process group, starts the program, reports its status, and on the
// death of tcprof (SIGTERM through PR_SET_PDEATHSIG) cleans up and kills the group.
[[noreturn]] void guard(const Launch& l) {
  ::setpgid(0, 0);
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGCHLD);
  ::sigprocmask(SIG_SETMASK, &waited, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != l.parent) ::_exit(126);  // tcprof died before the line above
  pid_t program = ::fork();
  if (program < 0) {
    write_record(l.status_fd, StatusRecord::ExecFailed, errno);
    ::_exit(127);
  }
  if (program == 0) exec_program(l);
  ::close(l.output_fd);  // EOF on the pipe then means: the program and its children are done
  for (;;) {
    siginfo_t info;
    int sig = ::sigwaitinfo(&waited, &info);
    if (sig == SIGCHLD) {
      int status = 0;
      if (::waitpid(program, &status, WNOHANG) == program) {
        write_record(l.status_fd, StatusRecord::Exited, status);
        ::_exit(0);
      }
    } else if (sig == SIGTERM) {
      if (l.remove_if_orphaned) ::unlink(l.remove_if_orphaned);
      ::kill(0, SIGKILL);  // the whole group: the program, its children and this guardian
      ::_exit(1);
    }
  }
}

// Reads the pipe until every writer is gone or the deadline passes.
bool read_output(int fd, Clock::time_point deadline, size_t max_output, std::string& output) {
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    struct pollfd p = {fd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 60000)));
    if (n < 0 && errno != EINTR) return true;
    if (n <= 0) continue;
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return true;  // EOF
    if (output.size() < max_output) output.append(buf, static_cast<size_t>(got));
  }
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  int out[2], status[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    result.spawn_errno = errno;
    return result;
  }
  if (::pipe2(status, O_CLOEXEC) != 0) {
    result.spawn_errno = errno;
    ::close(out[0]);
    ::close(out[1]);
    return result;
  }
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  Launch l;
  for (const auto& a : argv) l.argv.push_back(const_cast<char*>(a.c_str()));
  l.argv.push_back(nullptr);
  l.remove_if_orphaned = options.remove_if_orphaned.empty() ? nullptr : options.remove_if_orphaned.c_str();
  l.parent = ::getpid();
  l.devnull = devnull;
  l.output_fd = out[1];
  l.status_fd = status[1];

  auto start = Clock::now();
  pid_t guardian = ::fork();
  if (guardian == 0) guard(l);
  int fork_errno = errno;
  ::close(out[1]);
  ::close(status[1]);
  if (devnull >= 0) ::close(devnull);
  if (guardian < 0) {
    ::close(out[0]);
    ::close(status[0]);
    result.spawn_errno = fork_errno;
    return result;
  }
  // The guardian calls setpgid itself; doing it here too closes the race with a timeout kill.
  ::setpgid(guardian, guardian);

  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options.timeout_s));
  if (!read_output(out[0], deadline, options.max_output, result.output)) {
    result.timed_out = true;
    ::kill(-guardian, SIGKILL);
  }
  ::close(out[0]);
  StatusRecord record;
  bool exited = false;
  while (true) {
    ssize_t got = ::read(status[0], &record, sizeof record);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof record)) break;
    if (record.kind == StatusRecord::ExecFailed) result.spawn_errno = record.value;
    if (record.kind == StatusRecord::Exited) {
      result.status = record.value;
      exited = true;
    }
  }
  ::close(status[0]);
  int guardian_status = 0;
  while (::waitpid(guardian, &guardian_status, 0) < 0 && errno == EINTR) {
  }
  if (!exited && result.spawn_errno == 0) result.status = guardian_status;  // killed on timeout
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (result.output.size() >= options.max_output) result.output += "\n[output truncated]\n";
  return result;
}

}  // namespace tcprof
