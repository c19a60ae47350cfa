// The lowering table: which aten ops become kernel expressions, and the expression each one
// decomposes into (the primitive set of loop_ir.h). Ops not in the table stay LibTorch calls:
// views and compute-bound ops by design (extern), everything else as a fallback with a perf hint.
// See docs/backend.md for the list.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include "compiler/backends/backend.h"
#include "compiler/ir/captured_graph.h"
#include "compiler/backends/cpp/lower/kernel_builder.h"

namespace tcprof {

struct OpLowering {
  // Column: a sum over the leading dims (the kept trailing dims are the row, one sum per element).
  enum class Kind { None, Pointwise, Row, Column } kind = Kind::None;
  int row_dims = 0;       // Row: trailing dimensions the op reduces or normalises over; Column: those it keeps
  bool per_row = false;   // Row: the output has one value per row (mean, sum); Column: one per row element
  std::string reason;     // None: why not, for perf hints ("dtype f16", "no lowering")
};

// Values of one example run of the graph: every slot, and the frame inputs for symbolic args.
struct LowerContext {
  const std::vector<c10::IValue>& slots;
  const SymBindings& bindings;
  // Where the kernels run: ops with a tensor elsewhere stay LibTorch calls (the cpp backend's
  // CPU; the cuda backend's GPU, or the CPU when its kernels run in emulation).
  c10::Device device = c10::Device(c10::kCPU);
  // bf16 and f16 ops become kernels too (computed in float, rounded where stored): the cuda backend.
  bool low_precision = false;
  c10::IValue arg(const GraphOp& op, size_t i) const { return evaluate_arg(op.args[i], slots, bindings); }
};

OpLowering classify_op(const GraphOp& op, const LowerContext& ctx);

// True for ops that only create a view or are compute-bound library calls: they stay extern
// without a perf hint.
bool is_extern_by_design(const std::string& op_name);

struct EmitCallbacks {
  std::function<int(size_t arg)> tensor_arg;                 // node reading tensor argument `arg`
  std::function<int(const at::Tensor&)> constant_tensor;     // node reading a compile-time tensor
};

// Emits the op's expression; returns the node of its (single) output.
int emit_op(const GraphOp& op, const LowerContext& ctx, KernelBuilder& kb, const EmitCallbacks& cb);

bool to_elem_type(c10::ScalarType t, ElemType* out);

}  // namespace tcprof
