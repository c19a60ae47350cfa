// The graph-break registry: one stable id per distinct cause (like PyTorch's graph-break
// registry), with the PRODUCT.md type, an explanation and hints. Ids never change meaning; new
// causes get new ids. docs/graph-breaks.md is generated from this table's content.
#pragma once
#include <string_view>
#include <vector>

namespace tcprof {

enum class BreakCause {
  Print,                  // prim::Print
  Warn,                   // aten::warn
  Raise,                  // prim::RaiseException (raise, failed assert)
  DataDependentIf,        // if on tensor data
  DataDependentLoop,      // while / loop condition on tensor data
  TensorToScalar,         // item(), int(t), float(t), bool(t) outside a branch
  TensorToList,           // tolist()
  DynamicOutputShape,     // nonzero, unique, masked_select, boolean-mask indexing
  UnsupportedOp,          // no way to run or capture the op
  UnsupportedValue,       // a value a graph cannot carry
  ModuleStateMutation,    // assignment to a module attribute
  DynamicShapeNoRule,     // a size read of a tensor whose dynamic shape tcprof cannot express
};

struct BreakInfo {
  BreakCause cause;
  std::string_view id;     // TCB0001...
  std::string_view type;   // PRODUCT.md break type
  std::string_view title;
  std::string_view explanation;
  std::string_view hint;
};

const BreakInfo& break_info(BreakCause cause);
const std::vector<BreakInfo>& all_breaks();

}  // namespace tcprof
