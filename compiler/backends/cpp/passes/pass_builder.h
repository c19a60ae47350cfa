// Passes that add ops (decompose_batch_norm, split_reductions) build them as the derivative rules
// do (compiler/autodiff/graph_builder.h: a TorchScript node per op), each with its value in the
// example run, so that `examples` stays in step with the graph. Ops are appended to the graph's
// op list: a pass that inserts moves the old list out and pushes its ops back in order.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "compiler/autodiff/graph_builder.h"
#include "compiler/backends/cpp/passes/graph_passes.h"

namespace tcprof {

// An op's argument as an argument of an op the pass builds: a slot as its value, a constant as it
// is, a tensor constant detached (a weight that requires grad cannot be a TorchScript constant; an
// inference graph needs none).
BuildArg inference_arg(const Arg& a);

class PassBuilder {
 public:
  explicit PassBuilder(PassContext& ctx) : ctx_(ctx) {}
  // The graph's ops, moved out: the pass pushes them back in order, its own ops between them.
  std::vector<GraphOp> take_ops();
  // Appends name(args...) (source location from `origin`), its output's example `example`.
  Val emit(const char* name, const std::vector<BuildArg>& args, const GraphOp* origin, const at::Tensor& example);
  // From apply_renames on, reads of slot `from` (ops and outputs) are reads of `to`.
  void rename(int from, int to) { renamed_.emplace_back(from, to); }
  void apply_renames();

 private:
  PassContext& ctx_;
  std::optional<GraphBuilder> builder_;  // made at the first op: most graphs get none
  std::vector<std::pair<int, int>> renamed_;
};

}  // namespace tcprof
