// Linked into every executable that links LibTorch (the tcprof_torch target): before main, a
// process whose std::filesystem calls would go to LibTorch's copies restarts with libstdc++
// first (core/libstdcxx_binding.h). An object of its own, so no archive can drop it.
#include "core/libstdcxx_binding.h"

namespace {

// Priority 101 runs before the program's other constructors; the libraries' (LibTorch's) ran already.
__attribute__((constructor(101))) void restart_with_libstdcxx_first() {
  tcprof::libstdcxx::restart_with_libstdcxx_first_if_needed();
}

}  // namespace
