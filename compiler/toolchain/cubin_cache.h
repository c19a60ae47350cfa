// Compiled CUDA kernels kept on disk by the kernel cache's rules (cache_files.h): content-addressed
// by the source, the architecture and the NVRTC version (<cache_dir>/cubins/<k[0:2]>/<k>.cubin,
// the .cu beside it), written atomically, each CUBIN's SHA-256 checked before it is handed to the
// driver, a folder another user owns or can write refused. A warm start loads the CUBIN instead of
// running NVRTC. No LibTorch.
#pragma once
#include <string>

#include "compiler/toolchain/nvrtc_compiler.h"

namespace tcprof {

struct CachedCubin {
  std::string cubin;
  bool cache_hit = false;
  double compile_s = 0;  // NVRTC's time (0 on a hit)
  std::string key;
};

// The CUBIN of `source` for `arch` from the cache in `cache_dir`, or compiled by `nvrtc` and
// stored. A damaged entry is said on stderr and rebuilt. Throws NvrtcError when NVRTC rejects the
// source, Error(Input) when the cache folder is unsafe.
CachedCubin cached_cubin(const NvrtcCompiler& nvrtc, const std::string& source, const std::string& arch,
                         const std::string& cache_dir);

}  // namespace tcprof
