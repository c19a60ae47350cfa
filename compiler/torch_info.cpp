#include "compiler/torch_info.h"

#include <ATen/Parallel.h>

#include "compiler/torch_compat.h"

namespace tcprof {

std::string libtorch_version() { return TORCH_VERSION; }

int intra_op_threads() { return at::get_num_threads(); }

}  // namespace tcprof
