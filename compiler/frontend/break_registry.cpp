#include "compiler/frontend/break_registry.h"

namespace tcprof {

const std::vector<BreakInfo>& all_breaks() {
  static const std::vector<BreakInfo> table = {
      {BreakCause::Print, "TCB0001", "side_effect", "print() in forward",
       "Printing is a side effect a compiled graph cannot perform: the graph ends before the "
       "print, the print runs eagerly, and a new graph starts after it.",
       "remove print() or move it out of forward (log outside the model, or guard it with a "
       "flag that is False when compiling)"},
      {BreakCause::Warn, "TCB0002", "side_effect", "warnings.warn() in forward",
       "Emitting a warning is a side effect: the graph ends, the warning runs eagerly.",
       "move the warning out of forward, or emit it once at construction time"},
      {BreakCause::Raise, "TCB0003", "side_effect", "raise or failed assert in forward",
       "Raising an exception cannot be part of a graph: the graph ends and the raise runs "
       "eagerly.",
       "validate inputs before calling the model, or make the condition depend only on shapes "
       "so it is decided at compile time"},
      {BreakCause::DataDependentIf, "TCB0004", "data_dependent_branch",
       "if-statement on tensor data",
       "The branch taken depends on the values inside a tensor, which are unknown until the "
       "graph runs: the graph ends, the condition is evaluated eagerly and capture resumes in "
       "the branch taken.",
       "use torch.where(cond, a, b) instead of a data-dependent if, or compute both branches "
       "and select"},
      {BreakCause::DataDependentLoop, "TCB0005", "data_dependent_branch",
       "loop condition on tensor data",
       "The number of iterations depends on tensor values: every evaluation of the condition "
       "ends the graph.",
       "iterate a fixed number of times and mask finished elements, or move the loop out of the "
       "compiled region"},
      {BreakCause::TensorToScalar, "TCB0006", "scalar_output", "tensor converted to a Python scalar",
       "item(), int(t), float(t) and bool(t) copy a tensor value out of the graph: the graph "
       "ends so the value can be read.",
       "keep the value as a 0-d tensor (use tensor ops instead of Python arithmetic), or move "
       "the conversion after the model"},
      {BreakCause::TensorToList, "TCB0007", "scalar_output", "tensor converted to a list",
       "tolist() copies tensor data out of the graph.",
       "keep the data as a tensor; index it with tensor ops"},
      {BreakCause::DynamicOutputShape, "TCB0008", "dynamic_output_shape",
       "op whose output shape depends on data",
       "nonzero, unique, masked_select and boolean-mask indexing produce tensors whose size is "
       "only known after the data is inspected: the graph ends and the op runs eagerly.",
       "use torch.where / masked_fill with a fixed-size output, or pass size= (e.g. "
       "torch.nonzero_static) so the shape is known"},
      {BreakCause::UnsupportedOp, "TCB0009", "unsupported_op", "operation tcprof cannot capture",
       "The operation has no schema or implementation tcprof can run inside a graph (a Python "
       "op, a custom class method).",
       "replace it with standard torch operations, or move it out of the compiled module"},
      {BreakCause::UnsupportedValue, "TCB0010", "unsupported_value",
       "value a graph cannot carry",
       "A value of this type (e.g. a dict or a string built at run time, an object) flows "
       "through tensor computation, and graphs only carry tensors and numbers.",
       "pass tensors and numbers between the parts of the model; build strings and dicts "
       "outside forward"},
      {BreakCause::ModuleStateMutation, "TCB0011", "module_state_mutation",
       "assignment to a module attribute",
       "forward assigns to self.<attr>: the module's state changes while it runs, which a "
       "compiled graph cannot express.",
       "register the state as a buffer and update it in place (self.buf.copy_(...)), or keep "
       "the state outside the module"},
      {BreakCause::DynamicShapeNoRule, "TCB0012", "unsupported_op",
       "size read from a dynamic shape tcprof cannot express",
       "A size of this tensor depends on a dynamic dimension through an op that has no "
       "symbolic shape rule, and the code reads it: the graph ends so the size is known.",
       "mark fewer dimensions dynamic (pad inputs to a few fixed sizes), or avoid reading the "
       "size of this tensor inside forward"},
  };
  return table;
}

const BreakInfo& break_info(BreakCause cause) {
  for (const auto& info : all_breaks()) {
    if (info.cause == cause) return info;
  }
  return all_breaks().front();
}

}  // namespace tcprof
