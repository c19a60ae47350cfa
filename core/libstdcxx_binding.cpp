#include "core/libstdcxx_binding.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

namespace tcprof::libstdcxx {
namespace {

// remove_all is the function that crashed (TempDir::~TempDir -> libtorch.so -> address 0);
// path::_M_split_cmpts is behind nearly every path operation. A library that comes before
// libstdc++ in the search order takes them all, so these stand for the whole set.
constexpr const char* kSymbols[] = {
    "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code",
    "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathE",
    "_ZNSt10filesystem7__cxx114path14_M_split_cmptsEv",
};
constexpr const char* kRestartedVar = "TCPROF_LIBSTDCXX_RESTARTED";
constexpr const char* kCallerPreloadVar = "TCPROF_LIBSTDCXX_CALLER_LD_PRELOAD";

bool g_restarted = false;

// The sanitizer runtime this process was linked with, "" without one. AddressSanitizer (and
// ThreadSanitizer) must stay first in the library list, or the restarted process aborts ("ASan
// runtime does not come first"): a sanitized build restarts with it in front of libstdc++.
std::string sanitizer_runtime() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        const std::string base = name.substr(name.rfind('/') + 1);
        if (base.rfind("libasan.so", 0) != 0 && base.rfind("libtsan.so", 0) != 0) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &found);
  return found;
}

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(name);
}

const link_map* map_of(void* handle) {
  link_map* map = nullptr;
  if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0) return nullptr;
  return map;
}

struct Handle {
  void* h;
  explicit Handle(void* handle) : h(handle) {}
  ~Handle() {
    if (h) dlclose(h);
  }
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", program_invocation_short_name, message.c_str());
  std::fflush(stderr);
  _exit(3);
}

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

// The object (program or library) this code was linked into, and whether its own calls to
// remove_all stay inside it: a static libstdc++ linked in front of LibTorch (the -u options of
// cmake/TcprofLibTorch.cmake). Its address as this code takes it is where its calls go.
bool calls_stay_inside_this_object() {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&, std::error_code&);
  RemoveAll called = &std::filesystem::remove_all;
  Dl_info called_info{}, own_info{};
  link_map *called_map = nullptr, *own_map = nullptr;
  if (!dladdr1(reinterpret_cast<void*>(called), &called_info, reinterpret_cast<void**>(&called_map), RTLD_DL_LINKMAP) ||
      !dladdr1(reinterpret_cast<void*>(&calls_stay_inside_this_object), &own_info, reinterpret_cast<void**>(&own_map),
               RTLD_DL_LINKMAP)) {
    return false;
  }
  // A program built without PIE takes a function's address through its own PLT stub, which
  // lookups by name then return too: that is no static copy.
  return called_map && called_map == own_map && dlsym(RTLD_DEFAULT, kSymbols[0]) != reinterpret_cast<void*>(called);
}

}  // namespace

Binding check() {
  Binding result;
  result.static_copy = calls_stay_inside_this_object();
  Handle libstdcxx(dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD));
  const link_map* own_map = map_of(libstdcxx.h);
  if (own_map) result.libstdcxx = own_map->l_name;
  // No shared libstdc++ in this process, or this code calls its own static copy: calls cannot go
  // astray.
  if (!own_map || result.static_copy) return result;
  Handle program(dlopen(nullptr, RTLD_LAZY));
  const link_map* program_map = map_of(program.h);
  for (const char* symbol : kSymbols) {
    void* own = dlsym(libstdcxx.h, symbol);
    if (!own) continue;  // a libstdc++ without it: nothing to compare
    void* first = dlsym(RTLD_DEFAULT, symbol);
    if (first == own) continue;
    Dl_info info{};
    link_map* map = nullptr;
    if (!first || !dladdr1(first, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP)) continue;
    if (map == program_map) continue;  // the program's own copy (a static libstdc++): its calls stay inside it
    result.ok = false;
    result.symbol = demangle(symbol);
    result.bound_to = info.dli_fname ? info.dli_fname : "another library";
    return result;
  }
  return result;
}

std::string describe(const Binding& binding) {
  if (binding.ok) {
    if (binding.static_copy || binding.libstdcxx.empty()) {
      return "std::filesystem calls go to libstdc++ (linked statically into this program)";
    }
    return "std::filesystem calls go to libstdc++ (" + binding.libstdcxx + ")";
  }
  return "calls to " + binding.symbol + " go to " + binding.bound_to + " instead of libstdc++" +
         (binding.libstdcxx.empty() ? "" : " (" + binding.libstdcxx + ")") +
         ": the program was linked with that library before libstdc++, and official LibTorch builds export "
         "copies of libstdc++'s std::filesystem functions that crash. Link libstdc++ first: "
         "-Wl,--push-state,--no-as-needed,-lstdc++,--pop-state before LibTorch (tcprof's own build does; a "
         "program built with find_package(tcprof) gets it from the tcprof::tcprof target)";
}

void restart_with_libstdcxx_first_if_needed() {
  if (std::getenv(kRestartedVar)) {
    // The restarted process: LD_PRELOAD has done its work for this process; its children (the C++
    // compiler, a shell, another tcprof) get the caller's environment back.
    if (const char* caller = std::getenv(kCallerPreloadVar)) {
      setenv("LD_PRELOAD", caller, 1);
    } else {
      unsetenv("LD_PRELOAD");
    }
    unsetenv(kCallerPreloadVar);
    unsetenv(kRestartedVar);
    Binding binding = check();
    if (!binding.ok) fail(describe(binding) + " (restarting with libstdc++ preloaded did not change that)");
    g_restarted = true;
    return;
  }
  Binding binding = check();
  if (binding.ok) return;
  if (binding.libstdcxx.empty()) fail(describe(binding));
  std::string preload = binding.libstdcxx;
  if (const std::string runtime = sanitizer_runtime(); !runtime.empty()) preload = runtime + " " + preload;
  if (const char* caller = std::getenv("LD_PRELOAD")) {
    setenv(kCallerPreloadVar, caller, 1);
    if (*caller) preload += std::string(" ") + caller;
  }
  setenv(kRestartedVar, "1", 1);
  setenv("LD_PRELOAD", preload.c_str(), 1);
  std::vector<std::string> args = own_arguments();
  if (args.empty()) fail(describe(binding) + " (cannot read /proc/self/cmdline to restart)");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv.data());
  fail(describe(binding) + " (restarting with libstdc++ preloaded failed: " + std::strerror(errno) + ")");
}

bool restarted() { return g_restarted; }

}  // namespace tcprof::libstdcxx
