#include "compiler/runtime/torch_info.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>

#include "compiler/torch_compat.h"

namespace tcprof {

std::string libtorch_version() { return TORCH_VERSION; }

int intra_op_threads() { return at::get_num_threads(); }

void set_intra_op_threads(int threads) {
  at::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto set_blas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set_blas(threads);
}

}  // namespace tcprof
