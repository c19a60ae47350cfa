#include "core/kernel_name.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tcprof {

std::string demangled_kernel_name(std::string_view name) {
  if (!looks_mangled(name)) return std::string(name);
  int status = 0;
  const std::string mangled(name);  // __cxa_demangle needs a NUL-terminated name
  std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !text) return mangled;
  return std::string(text.get());
}

std::string short_kernel_name(std::string_view name) {
  // Only a demangled signature has a parameter list; other names (cuBLAS's sm90_xmma_…, API
  // calls, tcprof's own kernels) may hold brackets of their own and stay as they are.
  if (name.find('(') == std::string_view::npos || name.back() != ')') return std::string(name);
  const std::string_view whole = name;
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (name.substr(i, kAnonymous.size()) == kAnonymous) {
      if (depth == 0) out += kAnonymous;
      i += kAnonymous.size() - 1;
    } else if (c == '<') {
      if (depth++ == 0) out += "<…>";
    } else if (c == '>') {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      if (c == '(') break;
      if (c == ' ') return std::string(whole);  // words, not a C++ name: "Memcpy HtoD (…)"
      out += c;
    }
  }
  return out.empty() ? std::string(name) : out;
}

}  // namespace tcprof
