#include "core/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

namespace tcprof::interrupt {
namespace {

std::mutex& registry_mutex() {
  static std::mutex mu;
  return mu;
}
std::map<int, std::function<void(int)>>& registry() {
  static std::map<int, std::function<void(int)>> actions;
  return actions;
}
bool installed = false;
int next_id = 1;
// Set when a signal arrived: the registered actions may be running on objects that their owners
// are about to destroy, so from then on unregistering waits for the exit instead.
std::atomic<bool> stopping{false};

void unregister(int id) {
  if (stopping.load()) {
    for (;;) ::pause();
  }
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().erase(id);
}

// The signals this process stops on: those not ignored when it started. A signal its parent set to
// be ignored stays ignored (nohup's SIGHUP; SIGINT for a shell's background job), as in any
// well-behaved program. Decided once, in install().
sigset_t stop_signals() {
  static const sigset_t set = [] {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current;
      if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
      sigaddset(&s, sig);
    }
    return s;
  }();
  return set;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
  }
}

[[noreturn]] void watch() {
  sigset_t set = stop_signals();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  fmt::print(stderr, "\ntcprof: {}: stopping\n", signal_name(sig));  // each action says what it kept
  std::map<int, std::function<void(int)>> actions;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    stopping.store(true);
    actions = registry();
  }
  // The actions run on a thread of their own so that a second signal (an impatient Ctrl-C) or a
  // 10 s limit still ends the process when one of them hangs.
  static std::atomic<bool> done{false};
  std::thread([actions = std::move(actions), sig] {
    for (auto it = actions.rbegin(); it != actions.rend(); ++it) it->second(sig);
    done.store(true);
  }).detach();
  const timespec tick{0, 50 * 1000 * 1000};
  for (int waited_ms = 0; !done.load() && waited_ms < 10000; waited_ms += 50) {
    if (sigtimedwait(&set, nullptr, &tick) > 0) break;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  // No destructors: other threads are still running model code. Child compilers watch for our
  // exit themselves (see compiler/toolchain/child_process.h).
  ::_exit(128 + sig);
}

pthread_t watcher;

// Threads that libraries started before install() (OpenBLAS starts its pool when it is loaded)
// do not block the stop signals, and the kernel may hand a signal to any thread that does not:
// there the default action would end the process without a word. This handler, run in such a
// thread, hands the signal on to the watching thread (pthread_kill is async-signal-safe).
void forward_to_watcher(int sig) { ::pthread_kill(watcher, sig); }

}  // namespace

void install() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (installed) return;
  installed = true;
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread thread(watch);
  watcher = thread.native_handle();
  thread.detach();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    if (!sigismember(&set, sig)) continue;
    struct sigaction forward {};
    forward.sa_handler = forward_to_watcher;
    sigfillset(&forward.sa_mask);
    forward.sa_flags = SA_RESTART;
    ::sigaction(sig, &forward, nullptr);
  }
}

Registration::Registration(std::function<void(int)> action) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (!installed) return;
  id_ = next_id++;
  registry().emplace(id_, std::move(action));
}

Registration::~Registration() {
  if (id_ != 0) unregister(id_);
}

Registration::Registration(Registration&& other) noexcept : id_(other.id_) { other.id_ = 0; }

Registration& Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    if (id_ != 0) unregister(id_);
    id_ = other.id_;
    other.id_ = 0;
  }
  return *this;
}

}  // namespace tcprof::interrupt
