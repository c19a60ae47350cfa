// How a module is compiled and run: stance, fullgraph, recompile limit, dynamic dimensions and
// backend (PRODUCT.md "Stances" and `tcprof run` flags).
#pragma once
#include <string>
#include <vector>

#include "compiler/runtime/input_spec.h"

namespace tcprof {

enum class Stance { Default, ForceEager, EagerOnRecompile, FailOnRecompile, EagerThenCompile };

struct CompileOptions {
  Stance stance = Stance::Default;
  bool fullgraph = false;
  int recompile_limit = 8;  // per frame, like torch._dynamo.config.recompile_limit
  std::vector<DimRef> dynamic;  // --dynamic I:D, symbolic from the first compile
  std::string backend = "cpp";
  bool strict = false;  // a graph the cpp backend cannot compile is an error, not an eager fallback
  std::string cuda_arch;    // cuda backend: NVRTC's target ("sm_90"); empty: the GPU's own
  bool cuda_graphs = true;  // cuda backend on a GPU: replay compiled graphs as CUDA graphs
  std::string kernel_cache_dir;  // cpp: empty = the process-wide cache (TCPROF_CACHE_DIR); else a
                                 // private one (bench measures cold and warm starts with it)
};

Stance parse_stance(const std::string& name);  // throws Error(Usage) listing the stances
std::string stance_name(Stance stance);

}  // namespace tcprof
