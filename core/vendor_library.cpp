#include "core/vendor_library.h"

#include <dlfcn.h>

namespace tcprof {

void* SymbolBinder::lookup(const char* name) const { return dlsym(handle_, name); }

std::optional<VendorLibrary> open_vendor_library(const std::vector<std::string>& paths,
                                                 const std::function<void(SymbolBinder&)>& bind, std::string* tried) {
  std::string log;
  auto note = [&](const std::string& path, const std::string& why) {
    log += (log.empty() ? "" : "; ") + path + " (" + why + ")";
  };
  for (const auto& path : paths) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      note(path, why ? why : "not found");
      continue;
    }
    SymbolBinder binder(handle);
    bind(binder);
    if (!binder.missing().empty()) {
      note(path, "has no " + binder.missing());
      dlclose(handle);
      continue;
    }
    return VendorLibrary{handle, path};
  }
  if (tried) *tried = log.empty() ? "no paths" : log;
  return std::nullopt;
}

bool vendor_library_present(const char* name) {
  void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return false;
  dlclose(handle);
  return true;
}

}  // namespace tcprof
