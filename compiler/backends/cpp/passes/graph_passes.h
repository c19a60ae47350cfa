// Graph-level passes of the cpp backend, each in its own file and run in order by the driver in
// cpp_backend.cpp. They rewrite a private copy of the captured graph and keep `examples` (each
// slot's value in the example run the backend compiles with) in step with it.
#pragma once
#include <vector>

#include <ATen/core/ivalue.h>

#include "compiler/ir/captured_graph.h"

namespace tcprof {

struct PassContext {
  CapturedGraph& graph;
  std::vector<c10::IValue>& examples;  // by slot
  const SymBindings& bindings;
};

// In-place ops (relu_, add_, ...) whose target is a fresh intermediate nobody reads afterwards
// become their functional form, so they can fuse. Returns how many.
int functionalize_inplace(PassContext& ctx);
// Eval-mode batch norm right after a convolution with constant weights is folded into the
// convolution's weight and bias. Returns how many.
int fold_batch_norm(PassContext& ctx);
// Eval-mode batch norm with parameters that are graph values (training) becomes per-channel
// alpha and beta and a pointwise x * alpha + beta that fuses. Returns how many.
int decompose_batch_norm(PassContext& ctx);
// A sum over the trailing dims and leading ones becomes a row sum over the trailing dims (fused
// into its operand's kernel) and a sum of the row totals over the leading ones. Returns how many.
int split_reductions(PassContext& ctx);
// Ops whose arguments are all constants run once at compile time. Returns how many.
int fold_constants(PassContext& ctx);
// Eval-mode dropout and other identities disappear; identical pure ops are computed once
// (CSE); ops whose results nobody uses are removed (DCE). Returns ops removed.
int simplify_graph(PassContext& ctx);

// Whether an in-place op of `g` writes memory the graph does not own: a frame input, a weight or
// constant, or a view of one (index_put_ into a cache, add_ into an argument). A CUDA graph replay
// writes into its static copies of the inputs instead, so such a graph must not be replayed.
bool writes_outside_graph(const CapturedGraph& g);

// Shared by the passes.
bool is_pure_op(const std::string& name);
bool is_view_op(const std::string& name);
// An op that writes its input in place (add_, copy_, ...: functionalize_inplace leaves those whose
// input is read again). A pass that moves where an op reads its inputs must not move it across one.
bool writes_in_place(const GraphOp& op);
// An argument's value in the example run: a slot's example, a constant itself (None for a symbolic
// size or a list).
c10::IValue example_value(const PassContext& ctx, const Arg& a);
// Slots each op reads (through lists too).
std::vector<int> slots_read(const GraphOp& op);
// How many reads each slot has (ops' arguments, and a graph output counts as one more, so that a
// pass that needs a value's only reader leaves an output's value alone).
std::vector<int> reader_counts(const CapturedGraph& g);
// Replaces reads of `from` by `to` in every op after position `after` and in the outputs (when
// `to` is a slot). Returns false if `from` is a graph output and `to` is not a slot.
bool replace_uses(CapturedGraph& g, int from, const Arg& to);
// Removes ops marked in `dead`.
void erase_ops(CapturedGraph& g, const std::vector<bool>& dead);

}  // namespace tcprof
