// A captured graph: the straight-line tensor program between two graph breaks, specialised to
// the decisions taken at capture. Values live in numbered slots: the frame's inputs first, then
// each op's outputs. Backends compile or interpret it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

#include "compiler/frontend/source_location.h"
#include "compiler/ir/sym_expr.h"

namespace torch::jit {
struct Node;
struct Graph;
}

namespace tcprof {

// One argument of an op: a slot, a constant, a symbolic int evaluated per call, or a list of
// those (e.g. the sizes of a view with a dynamic batch).
struct Arg {
  enum class Kind { Slot, Constant, Sym, List };
  Kind kind = Kind::Constant;
  int slot = -1;
  c10::IValue constant;
  SymExprPtr sym;
  SymProgram program;  // compiled form of `sym`
  std::vector<Arg> items;
  c10::TypePtr element_type;  // List: the list's element type
};

struct GraphOp {
  const torch::jit::Node* node = nullptr;  // the TorchScript node (schema, source location)
  std::string name;                        // e.g. "aten::linear"
  std::vector<Arg> args;
  std::vector<int> outputs;                // slots written
  std::string module_path;
  SourceLoc loc;
};

enum class FrameInputKind { Tensor, Int, Float, Bool, Other };

struct FrameInput {
  FrameInputKind kind = FrameInputKind::Tensor;
  std::string name;  // for guards and IR: "x", "attn_weights"
  // Dimensions that were dynamic where the value was produced: a resume frame starts with them
  // symbolic instead of recompiling to discover it.
  std::vector<bool> dynamic_dims;
};

struct CapturedGraph {
  std::vector<FrameInput> inputs;  // slots 0..inputs.size()-1
  std::vector<GraphOp> ops;
  std::vector<int> outputs;        // slots returned, in order
  int num_slots = 0;
  // Nodes made by the compiler rather than read from the model (the backward graph's ops): every
  // op needs a node for its operator, and these live as long as the graph.
  std::shared_ptr<torch::jit::Graph> owned_nodes;
  // Prefix of the names its steps are timed under ("bwd " for a backward graph), so a graph's
  // forward and backward kernels stay apart in the profile.
  std::string step_prefix;
  // Every slot's value in the capture run, while the graph is being compiled: the backend reads
  // shapes and strides from them instead of running the graph once more (a whole forward: ViT-B
  // 0.46 s of each compile). Released once the backend has compiled; empty for graphs the
  // compiler builds itself (training's forward and backward).
  std::shared_ptr<const std::vector<c10::IValue>> capture_values;

  size_t op_count() const { return ops.size(); }
  // Readable IR, one op per line with its source line.
  std::string ir() const;
};

// Arguments are evaluated against the frame's inputs (for Sym) and the slots.
class ArgEvaluator {
 public:
  virtual ~ArgEvaluator() = default;
  virtual c10::IValue evaluate(const Arg& arg, const std::vector<c10::IValue>& slots) const = 0;
};

}  // namespace tcprof
