// Where this process's calls to libstdc++'s std::filesystem functions go.
//
// Official LibTorch builds (PyPI's torch wheels, the LibTorch download) export their own copies of
// libstdc++'s std::filesystem functions (pytorch#133437), and libtorch.so's remove_all calls
// functions it only references weakly: under a libstdc++ that lacks them it jumps to address 0.
// The dynamic linker binds every call to the first library in the program's search order that
// defines the symbol, so a program that needs LibTorch before libstdc++ calls those copies.
//
// tcprof's executables need libstdc++ first (CMakeLists.txt, tcprof_torch's link options). Where a
// toolchain still produces another order, the guard linked into each executable
// (libstdcxx_guard.cpp) starts the program again with libstdc++ preloaded, which puts it right
// after the executable in the search order. Library callers (the C++ API) get a clear error.
#pragma once
#include <string>

namespace tcprof::libstdcxx {

struct Binding {
  bool ok = true;
  std::string symbol;    // the first checked symbol bound elsewhere (demangled)
  std::string bound_to;  // the library it is bound to
  std::string libstdcxx; // libstdc++'s path in this process ("" when it is not loaded)
  bool static_copy = false;  // the checking code's own calls go to a libstdc++ linked into its object
};

// Compares what the process's search order finds for a few std::filesystem symbols with
// libstdc++'s own definitions. A program without a shared libstdc++ is always ok.
Binding check();

// One message naming the problem and the fix (for errors and `tcprof --version`).
std::string describe(const Binding& binding);

// For executables, before main: when the binding is wrong, runs the program again (same
// arguments and environment) with libstdc++ in LD_PRELOAD; the restarted process restores the
// caller's LD_PRELOAD so that its children are unaffected. Exits 3 with one line on stderr when
// that cannot help. Returns normally when the binding is right.
void restart_with_libstdcxx_first_if_needed();

// Whether this process was restarted by restart_with_libstdcxx_first_if_needed().
bool restarted();

}  // namespace tcprof::libstdcxx
