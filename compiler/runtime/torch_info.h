// Facts about the LibTorch this build links, for `tcprof --version` and the runs table.
#pragma once
#include <string>

namespace tcprof {

std::string libtorch_version();  // e.g. "1.13.0"
int intra_op_threads();
// Sets LibTorch's intra-op threads and, when LibTorch's BLAS is OpenBLAS, OpenBLAS's own thread
// pool to the same count. OpenBLAS otherwise keeps one spinning worker per core (sched_yield),
// which on a 2-core machine steals a core from every other kernel.
void set_intra_op_threads(int threads);

}  // namespace tcprof
