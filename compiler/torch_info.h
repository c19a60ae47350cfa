// Facts about the LibTorch this build links, for `tcprof --version` and the runs table.
#pragma once
#include <string>

namespace tcprof {

std::string libtorch_version();  // e.g. "1.13.0"
int intra_op_threads();

}  // namespace tcprof
