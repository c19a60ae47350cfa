// The capture interpreter (Dynamo's symbolic convert, for TorchScript): walks a method's graph
// with real inputs, inlining method calls, evaluating shape-only control flow at capture time
// (each such decision becomes a guard) and recording tensor operations into a CapturedGraph. It
// stops at the first graph break, leaving a resumable state; it also runs eagerly (Mode::Eager)
// from any state, which is how frames past the recompile limit and eager stances execute.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/frontend/frame.h"
#include "compiler/frontend/program.h"

namespace tcprof {

struct CaptureOutcome {
  CapturedGraph graph;
  GuardSet guards;
  EntryExit exit;
  std::vector<c10::IValue> output_values;  // the real values of graph.outputs in this run
  std::vector<c10::IValue> slot_values;    // the real value of every slot in this run
};

class Tracer {
 public:
  explicit Tracer(Program& program) : program_(program) {}

  // Captures from `frame.start` with this call's inputs. Throws Error(Input) when an op fails on
  // these inputs (wrong spec), naming the op and the user's line.
  CaptureOutcome capture(const Frame& frame, const std::vector<c10::IValue>& inputs);

  // Runs from `start` to the method's return without capturing.
  c10::IValue run_eagerly(const MachineState& start, const std::vector<c10::IValue>& values);

  // The state at the method's entry, with the method's arguments as frame inputs.
  MachineState entry_state(std::vector<FrameInput>* inputs);

 private:
  enum class Step { Continue, Break, Return };

  // tracer.cpp: the loop, control flow, calls and exits
  void bind_inputs(MachineState& state, const Frame* frame, const std::vector<c10::IValue>& values);
  Step run(MachineState& state);
  Step step(MachineState& state, const torch::jit::Node* node);
  Step finish_scope(MachineState& state);
  void enter_if(MachineState& state, const torch::jit::Node* node);
  void enter_loop(MachineState& state, const torch::jit::Node* node);
  void enter_call(MachineState& state, const torch::jit::Node* node);
  void build_break_exit(MachineState& state, const torch::jit::Node* node, BreakCause cause,
                        const std::string& reason, bool resume_at_node = false);
  void build_return_exit(const VarPtr& result);
  GraphBreakSite break_site(const MachineState& state, const torch::jit::Node* node, BreakCause cause,
                            const std::string& reason);
  MachineState resume_state(const MachineState& state, const torch::jit::Node* node, bool resume_at_node,
                            EntryExit& exit);
  void bind_break_outputs(const torch::jit::Node* node, Activation& top, EntryExit& exit);
  void name_resume_inputs(const MachineState& resume, EntryExit& exit);
  VarPtr export_value(const VarPtr& var, EntryExit& exit, std::unordered_map<const Var*, VarPtr>& seen);
  ResultTemplate result_template(const VarPtr& var);
  int graph_output_index(int slot);
  std::vector<StackEntry> stack_of(const MachineState& state, const torch::jit::Node* node) const;

  // tracer_nodes.cpp: one node at a time
  VarPtr& env(MachineState& state, const torch::jit::Value* v);
  VarPtr lookup(MachineState& state, const torch::jit::Value* v);
  bool handle_structural(MachineState& state, const torch::jit::Node* node);
  bool handle_meta(MachineState& state, const torch::jit::Node* node, const std::vector<VarPtr>& in);
  bool handle_scalar_op(MachineState& state, const torch::jit::Node* node, const std::vector<VarPtr>& in);
  void emit_graph_op(MachineState& state, const torch::jit::Node* node, const std::vector<VarPtr>& in);
  void run_concretely(MachineState& state, const torch::jit::Node* node, const std::vector<VarPtr>& in);
  std::optional<std::pair<BreakCause, std::string>> classify_break(
      const torch::jit::Node* node, const std::vector<VarPtr>& in) const;
  Arg to_arg(const VarPtr& var);
  c10::IValue value_of(const VarPtr& var) const;
  void add_decision_guard(const VarPtr& cond, bool taken, const torch::jit::Node* node);
  void specialize(const VarPtr& var, const torch::jit::Node* node);
  void guard_param_requires_grad(const c10::intrusive_ptr<c10::ivalue::Object>& object, const std::string& name,
                                 const at::Tensor& value, const std::string& path, const torch::jit::Node* node);
  std::vector<std::string> input_names() const;

  Program& program_;
  bool eager_ = false;
  const Frame* frame_ = nullptr;
  CaptureOutcome out_;
  std::unordered_map<int, int> output_of_slot_;
  std::vector<c10::IValue> slot_values_;  // real value of every slot in this capture
  c10::IValue eager_result_;
  bool broke_ = false;  // handle_meta ended the graph
  const torch::jit::Node* current_ = nullptr;
  int activation_ = 0;  // activation of the node being stepped
};

// A resume template with the breaking op's bool results filled in: the frame for that outcome.
MachineState resume_state_for_outcome(const MachineState& resume, const std::vector<bool>& outcome);

}  // namespace tcprof
