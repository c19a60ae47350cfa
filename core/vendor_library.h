// Optional vendor libraries loaded at run time (CUPTI, NVRTC, the CUDA driver): tcprof is built
// against their headers for types only and never links them, so one binary runs with or without
// CUDA and says what is missing instead of failing to start. This is the one way they are found:
// the first candidate path that opens and has every required entry point.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tcprof {

// Resolves entry points of one open library into function pointers, remembering the first that
// is missing.
class SymbolBinder {
 public:
  explicit SymbolBinder(void* handle) : handle_(handle) {}
  // Required: a missing one makes the library unusable (missing() names it).
  template <typename Fn>
  void bind(Fn& fn, const char* name) {
    void* sym = lookup(name);
    if (!sym && missing_.empty()) missing_ = name;
    fn = reinterpret_cast<std::remove_reference_t<Fn>>(sym);
  }
  // Optional: left null where the library lacks it (newer entry points).
  template <typename Fn>
  void bind_optional(Fn& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<Fn>>(lookup(name));
  }
  const std::string& missing() const { return missing_; }

 private:
  void* lookup(const char* name) const;
  void* handle_;
  std::string missing_;
};

struct VendorLibrary {
  void* handle = nullptr;  // stays open for the process: code loaded through it may run until exit
  std::string path;        // the candidate that was loaded
};

// Opens the first of `paths` (dlopen, RTLD_NOW | RTLD_LOCAL) for which `bind` leaves nothing
// missing; a candidate that opens but lacks an entry point is closed and the next one tried.
// Nothing when none works; then `tried` lists each candidate and why, "path (reason); ...".
std::optional<VendorLibrary> open_vendor_library(const std::vector<std::string>& paths,
                                                 const std::function<void(SymbolBinder&)>& bind, std::string* tried);

// Whether `name` can be opened at all (the CUDA driver's presence, say); closed again at once.
bool vendor_library_present(const char* name);

}  // namespace tcprof
