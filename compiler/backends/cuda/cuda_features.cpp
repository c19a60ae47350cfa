#include "compiler/backends/cuda/cuda_features.h"

#include <cstdlib>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof {

CudaFeatures cuda_features_from_env() {
  CudaFeatures f;
  const char* env = std::getenv("TCPROF_CUDA_OFF");
  if (!env) return f;
  std::istringstream names(env);
  std::string name;
  while (std::getline(names, name, ',')) {
    if (name == "vectors") f.vectors = false;
    else if (name == "row-registers") f.row_registers = false;
    else if (name == "linear-epilogues") f.linear_epilogues = false;
    else if (name == "optimizer-kernel") f.optimizer_kernel = false;
    else if (name == "launch-tuning") f.launch_tuning = false;
    else if (!name.empty()) {
      throw Error(ErrorKind::Usage, fmt::format("TCPROF_CUDA_OFF: unknown feature '{}' (known: vectors, row-registers, "
                                                "linear-epilogues, optimizer-kernel, launch-tuning; unset it to keep them all)", name));
    }
  }
  return f;
}

}  // namespace tcprof
