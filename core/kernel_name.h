// Kernel names as users read them. CUPTI reports a CUDA kernel by its mangled C++ name
// (`_ZN2at6native18elementwise_kernel…`); Nsight Systems, Kineto and tcprof show it demangled.
// The store demangles once, where a name enters it (RunWriter), keeps the mangled name in its own
// column for lookups, and RunReader demangles the names of databases written before that.
#pragma once
#include <string>
#include <string_view>

namespace tcprof {

// `name` demangled when it is an Itanium-ABI mangled name (starts with `_Z`) that demangles;
// otherwise `name` unchanged (a CPU kernel, an API call, an already readable name).
std::string demangled_kernel_name(std::string_view name);

// A demangled name as one short line, for titles and narrow columns: no return type, no parameter
// list, template arguments folded to `<…>`:
//   void at::native::elementwise_kernel<128, 2, …>(int, …)  ->  at::native::elementwise_kernel<…>
// Names that are not C++ signatures come back unchanged.
std::string short_kernel_name(std::string_view name);

// True when `name` looks mangled: what a reader checks before paying for a demangle.
inline bool looks_mangled(std::string_view name) {
  return name.size() > 2 && name[0] == '_' && name[1] == 'Z';
}

}  // namespace tcprof
