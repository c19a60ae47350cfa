#include "compiler/frontend/tracer.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include <ATen/core/grad_mode.h>
#include <fmt/format.h>

#include "compiler/frontend/shape_rules.h"
#include "core/error.h"

namespace tcprof {

using torch::jit::Node;
using torch::jit::Value;

namespace {

// Outcome placeholders in a resume template: bool results of the breaking op.
constexpr int kOutcomeSlotBase = 1 << 20;

std::string clean_name(const Value* v) {
  std::string name = v->debugName();
  size_t dot = name.find('.');
  if (dot != std::string::npos && dot > 0) name = name.substr(0, dot);
  return name;
}

FrameInputKind kind_of(const c10::IValue& v) {
  if (v.isTensor()) return FrameInputKind::Tensor;
  if (v.isInt()) return FrameInputKind::Int;
  if (v.isDouble()) return FrameInputKind::Float;
  if (v.isBool()) return FrameInputKind::Bool;
  return FrameInputKind::Other;
}

}  // namespace

MachineState Tracer::entry_state(std::vector<FrameInput>* inputs) {
  MachineState state;
  Activation root;
  root.graph = program_.root_graph();
  root.function = program_.method_name();
  const auto& graph_inputs = root.graph->inputs();
  root.env[graph_inputs[0]] = Var::constant(program_.module()._ivalue());
  for (size_t i = 1; i < graph_inputs.size(); ++i) {
    auto placeholder = std::make_shared<Var>();
    placeholder->kind = Var::Kind::Input;
    placeholder->slot = static_cast<int>(i - 1);
    root.env[graph_inputs[i]] = placeholder;
    FrameInput in;
    in.name = clean_name(graph_inputs[i]);
    auto t = graph_inputs[i]->type();
    in.kind = t->kind() == c10::TypeKind::TensorType ? FrameInputKind::Tensor
              : t->kind() == c10::TypeKind::IntType  ? FrameInputKind::Int
              : t->kind() == c10::TypeKind::FloatType ? FrameInputKind::Float
              : t->kind() == c10::TypeKind::BoolType  ? FrameInputKind::Bool
                                                      : FrameInputKind::Other;
    inputs->push_back(in);
  }
  state.activations.push_back(std::move(root));
  Scope body;
  body.kind = Scope::Kind::Body;
  body.block = program_.root_graph()->block();
  state.scopes.push_back(body);
  return state;
}


// Replaces Input placeholders with live values for this call, and guards every input.
void Tracer::bind_inputs(MachineState& state, const Frame* frame, const std::vector<c10::IValue>& values) {
  std::vector<VarPtr> live(values.size());
  for (size_t k = 0; k < values.size(); ++k) {
    const c10::IValue& v = values[k];
    auto var = std::make_shared<Var>();
    var->value = v;
    int slot = static_cast<int>(k);
    const std::string& name = frame ? frame->inputs[k].name : std::string();
    if (eager_) {
      var->kind = Var::Kind::Constant;
    } else if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      var->kind = Var::Kind::Tensor;
      var->slot = slot;
      Guard g;
      g.input = slot;
      g.kind = GuardKind::Dtype;
      g.expected = static_cast<int64_t>(t.scalar_type());
      g.text = fmt::format("{}.dtype == {}", name, c10::toString(t.scalar_type()));
      out_.guards.add(g);
      g.kind = GuardKind::Device;
      g.expected = static_cast<int64_t>(t.device().type());
      g.text = fmt::format("{}.device.type == {}", name, c10::DeviceTypeName(t.device().type(), true));
      out_.guards.add(g);
      g.kind = GuardKind::Rank;
      g.expected = t.dim();
      g.text = fmt::format("{}.dim() == {}", name, t.dim());
      out_.guards.add(g);
      for (int64_t d = 0; d < t.dim(); ++d) {
        bool dynamic = frame && k < frame->dynamic_dims.size() &&
                       static_cast<size_t>(d) < frame->dynamic_dims[k].size() &&
                       frame->dynamic_dims[k][static_cast<size_t>(d)];
        var->sizes.push_back(SymExpr::input_dim(slot, static_cast<int>(d), dynamic));
        g.dim = static_cast<int>(d);
        if (dynamic) {
          g.kind = GuardKind::DynamicSize;
          g.expected = 2;
          g.text = fmt::format("{}.size({}) >= 2", name, d);
        } else {
          g.kind = GuardKind::Size;
          g.expected = t.size(d);
          g.text = fmt::format("{}.size({}) == {}", name, d, t.size(d));
        }
        out_.guards.add(g);
      }
      g.dim = -1;
      g.kind = GuardKind::Contiguous;
      g.expected = t.is_contiguous();
      g.text = fmt::format("{}.is_contiguous() == {}", name, t.is_contiguous() ? "True" : "False");
      out_.guards.add(g);
      g.kind = GuardKind::RequiresGrad;
      g.expected = t.requires_grad();
      g.text = fmt::format("{}.requires_grad == {}", name, t.requires_grad() ? "True" : "False");
      out_.guards.add(g);
    } else if (v.isInt()) {
      bool dynamic = frame && k < frame->dynamic_ints.size() && frame->dynamic_ints[k];
      var->kind = Var::Kind::Scalar;
      var->expr = SymExpr::input_int(slot, dynamic);
      if (!dynamic) {
        Guard g;
        g.kind = GuardKind::IntValue;
        g.input = slot;
        g.expected = v.toInt();
        g.text = fmt::format("{} == {}", name, v.toInt());
        out_.guards.add(g);
      }
    } else if (v.isDouble() || v.isBool()) {
      var->kind = Var::Kind::Scalar;
      Guard g;
      g.input = slot;
      g.kind = v.isDouble() ? GuardKind::FloatValue : GuardKind::BoolValue;
      g.expected_float = v.isDouble() ? v.toDouble() : 0;
      g.expected = v.isBool() ? v.toBool() : 0;
      g.text = v.isDouble() ? fmt::format("{} == {}", name, v.toDouble())
                            : fmt::format("{} == {}", name, v.toBool() ? "True" : "False");
      out_.guards.add(g);
    } else {
      var->kind = Var::Kind::GraphValue;
      var->slot = slot;
    }
    live[k] = var;
  }
  // Input guards point at the first line that uses the input, so "guard created at" reads as
  // the code that depends on it.
  if (!eager_) {
    std::vector<SourceLoc> first_use(values.size());
    const Scope& top = state.scopes.back();
    const Activation& act = state.activations[static_cast<size_t>(top.activation)];
    for (const auto& [value, var] : act.env) {
      if (var->kind != Var::Kind::Input || var->slot < 0 || static_cast<size_t>(var->slot) >= values.size()) continue;
      size_t best = SIZE_MAX;
      for (const auto& use : value->uses()) {
        SourceLoc loc = locate(use.user);
        size_t pos = program_.position(use.user);
        if (loc.known() && !is_library_file(loc.file) && pos < best) {
          best = pos;
          first_use[static_cast<size_t>(var->slot)] = loc;
        }
      }
    }
    out_.guards.set_input_locations(first_use);
  }
  if (!eager_) {
    Guard g;
    g.kind = GuardKind::GradMode;
    g.expected = at::GradMode::is_enabled();
    g.text = fmt::format("torch.is_grad_enabled() == {}", g.expected ? "True" : "False");
    out_.guards.add(g);
  }
  // Substitute placeholders (including inside lists and tuples) in every environment.
  std::function<VarPtr(const VarPtr&)> substitute = [&](const VarPtr& v) -> VarPtr {
    if (v->kind == Var::Kind::Input) return live.at(static_cast<size_t>(v->slot));
    if (v->kind == Var::Kind::List || v->kind == Var::Kind::Tuple) {
      auto copy = std::make_shared<Var>(*v);
      bool all_constant = true;
      for (auto& item : copy->items) {
        item = substitute(item);
        all_constant = all_constant && item->is_constant();
      }
      if (eager_ || all_constant) return Var::constant(value_of(copy));
      copy->value = value_of(copy);
      return copy;
    }
    return v;
  };
  for (auto& act : state.activations) {
    for (auto& [value, var] : act.env) var = substitute(var);
  }
}

CaptureOutcome Tracer::capture(const Frame& frame, const std::vector<c10::IValue>& inputs) {
  eager_ = false;
  frame_ = &frame;
  out_ = CaptureOutcome{};
  output_of_slot_.clear();
  slot_values_ = inputs;
  out_.graph.inputs = frame.inputs;
  out_.graph.num_slots = static_cast<int>(inputs.size());
  MachineState state = frame.start;
  bind_inputs(state, &frame, inputs);
  run(state);
  for (int slot : out_.graph.outputs) out_.output_values.push_back(slot_values_.at(static_cast<size_t>(slot)));
  out_.slot_values = std::move(slot_values_);
  slot_values_.clear();
  return std::move(out_);
}

c10::IValue Tracer::run_eagerly(const MachineState& start, const std::vector<c10::IValue>& values) {
  eager_ = true;
  frame_ = nullptr;
  out_ = CaptureOutcome{};
  MachineState state = start;
  bind_inputs(state, nullptr, values);
  run(state);
  return eager_result_;
}

Tracer::Step Tracer::run(MachineState& state) {
  while (!state.scopes.empty()) {
    size_t depth = state.scopes.size() - 1;
    Scope& scope = state.scopes[depth];
    const auto& nodes = program_.nodes(scope.block);
    if (scope.index >= nodes.size()) {
      if (finish_scope(state) == Step::Return) return Step::Return;
      continue;
    }
    // Advance first: a scope pushed by this node resumes its parent after the node, and a break
    // leaves the state positioned right after the breaking node, where the resume frame starts.
    const Node* node = nodes[scope.index++];
    activation_ = scope.activation;
    current_ = node;
    Step result;
    try {
      result = step(state, node);
    } catch (const c10::Error& e) {
      // A LibTorch assertion inside capture is a tcprof bug: name the node so it can be fixed.
      SourceLoc loc = locate(node);
      std::string what = e.what_without_backtrace();
      throw Error(ErrorKind::Internal, fmt::format("capture failed at {} ({}:{}): {}", node->kind().toQualString(),
                                                   loc.file, loc.line, what.substr(0, what.find('\n'))));
    }
    if (result == Step::Break) return Step::Break;
  }
  return Step::Return;
}

Tracer::Step Tracer::finish_scope(MachineState& state) {
  Scope scope = state.scopes.back();
  Activation& act = state.activations[static_cast<size_t>(scope.activation)];
  activation_ = scope.activation;
  const Node* ret = scope.block->return_node();
  std::vector<VarPtr> results;
  for (const Value* v : ret->inputs()) results.push_back(lookup(state, v));
  switch (scope.kind) {
    case Scope::Kind::Body: {
      state.scopes.pop_back();
      if (act.parent < 0) {
        VarPtr result = results.size() == 1 ? results[0] : nullptr;
        if (eager_) {
          eager_result_ = value_of(result);
        } else {
          build_return_exit(result);
        }
        return Step::Return;
      }
      // Hand the results to the caller and drop the callee's activation.
      const Node* call = act.call_site;
      int parent = act.parent;
      state.activations.pop_back();
      for (size_t i = 0; i < call->outputs().size(); ++i) {
        state.activations[static_cast<size_t>(parent)].env[call->outputs()[i]] = results[i];
      }
      return Step::Continue;
    }
    case Scope::Kind::Branch: {
      state.scopes.pop_back();
      for (size_t i = 0; i < scope.owner->outputs().size(); ++i) act.env[scope.owner->outputs()[i]] = results[i];
      return Step::Continue;
    }
    case Scope::Kind::Loop: {
      current_ = scope.owner;
      VarPtr cond = results[0];
      bool again = value_of(cond).toBool();
      add_decision_guard(cond, again, scope.owner);
      Scope& live = state.scopes.back();
      live.iteration += 1;
      const torch::jit::Block* body = scope.owner->blocks()[0];
      if (again && live.iteration < live.trip_count) {
        live.index = 0;
        act.env[body->inputs()[0]] = Var::constant(c10::IValue(live.iteration));
        for (size_t i = 1; i < body->inputs().size(); ++i) act.env[body->inputs()[i]] = results[i];
        return Step::Continue;
      }
      state.scopes.pop_back();
      for (size_t i = 0; i < scope.owner->outputs().size(); ++i) act.env[scope.owner->outputs()[i]] = results[i + 1];
      return Step::Continue;
    }
  }
  return Step::Continue;
}

void Tracer::enter_if(MachineState& state, const Node* node) {
  VarPtr cond = lookup(state, node->input(0));
  bool taken = value_of(cond).toBool();
  add_decision_guard(cond, taken, node);
  Scope scope;
  scope.kind = Scope::Kind::Branch;
  scope.block = node->blocks()[taken ? 0 : 1];
  scope.activation = activation_;
  scope.owner = node;
  state.scopes.push_back(scope);
}

void Tracer::enter_loop(MachineState& state, const Node* node) {
  VarPtr trip = lookup(state, node->input(0));
  VarPtr cond = lookup(state, node->input(1));
  // A trip count that depends on a dynamic size is specialised: the loop is unrolled.
  specialize(trip, node);
  int64_t trip_count = value_of(trip).toInt();
  bool enter = value_of(cond).toBool();
  add_decision_guard(cond, enter, node);
  Activation& act = state.activations[static_cast<size_t>(activation_)];
  if (!enter || trip_count <= 0) {
    for (size_t i = 0; i < node->outputs().size(); ++i) act.env[node->outputs()[i]] = lookup(state, node->input(i + 2));
    return;
  }
  const torch::jit::Block* body = node->blocks()[0];
  act.env[body->inputs()[0]] = Var::constant(c10::IValue(int64_t{0}));
  for (size_t i = 1; i < body->inputs().size(); ++i) act.env[body->inputs()[i]] = lookup(state, node->input(i + 1));
  Scope scope;
  scope.kind = Scope::Kind::Loop;
  scope.block = body;
  scope.activation = activation_;
  scope.owner = node;
  scope.trip_count = trip_count;
  state.scopes.push_back(scope);
}

void Tracer::enter_call(MachineState& state, const Node* node) {
  Activation callee;
  std::vector<VarPtr> args;
  if (node->kind() == c10::prim::CallMethod) {
    VarPtr self = lookup(state, node->input(0));
    auto type = node->input(0)->type()->expect<c10::ClassType>();
    callee.graph = program_.method_graph(type, node->s(c10::attr::name));
    callee.function = node->s(c10::attr::name);
    callee.module_path = self->module_path;
    for (const Value* v : node->inputs()) args.push_back(lookup(state, v));
  } else {  // prim::CallFunction: input 0 is the function
    callee.graph = program_.function_graph(node);
    callee.function = node->input(0)->type()->expect<c10::FunctionType>()->function()->name();
    callee.module_path = state.activations[static_cast<size_t>(activation_)].module_path;
    for (size_t i = 1; i < node->inputs().size(); ++i) args.push_back(lookup(state, node->input(i)));
  }
  callee.call_site = node;
  callee.parent = activation_;
  for (size_t i = 0; i < args.size(); ++i) callee.env[callee.graph->inputs()[i]] = args[i];
  state.activations.push_back(std::move(callee));
  Scope scope;
  scope.kind = Scope::Kind::Body;
  scope.block = state.activations.back().graph->block();
  scope.activation = static_cast<int>(state.activations.size() - 1);
  state.scopes.push_back(scope);
}

std::vector<StackEntry> Tracer::stack_of(const MachineState& state, const Node* node) const {
  // Walk from the innermost activation outwards: each frame's location is the node (innermost)
  // or the call site of the frame it called.
  std::vector<StackEntry> stack;
  const Node* at = node;
  for (int a = activation_; a >= 0; a = state.activations[static_cast<size_t>(a)].parent) {
    const Activation& act = state.activations[static_cast<size_t>(a)];
    stack.insert(stack.begin(), StackEntry{act.module_path, act.function, locate(at)});
    at = act.call_site;
  }
  return stack;
}

int Tracer::graph_output_index(int slot) {
  auto it = output_of_slot_.find(slot);
  if (it != output_of_slot_.end()) return it->second;
  int index = static_cast<int>(out_.graph.outputs.size());
  out_.graph.outputs.push_back(slot);
  output_of_slot_[slot] = index;
  return index;
}

// Turns a value that lives on past the graph into a resume-template value: constants stay,
// everything that depends on this call's inputs becomes an input of the resume frame.
VarPtr Tracer::export_value(const VarPtr& var, EntryExit& exit, std::unordered_map<const Var*, VarPtr>& seen) {
  auto found = seen.find(var.get());
  if (found != seen.end()) return found->second;
  VarPtr result;
  if (var->kind == Var::Kind::Constant) {
    result = var;
  } else if (var->kind == Var::Kind::List || var->kind == Var::Kind::Tuple) {
    auto copy = std::make_shared<Var>(*var);
    for (auto& item : copy->items) item = export_value(item, exit, seen);
    result = copy;
  } else {
    ValueSource source;
    FrameInput desc;
    desc.kind = kind_of(var->value);
    if (var->kind == Var::Kind::Tensor || var->kind == Var::Kind::GraphValue) {
      source.kind = ValueSource::Kind::Output;
      source.index = graph_output_index(var->slot);
      for (const auto& d : var->sizes) desc.dynamic_dims.push_back(!d || d->dynamic);
    } else if (var->expr && var->expr->dynamic) {
      source.kind = ValueSource::Kind::Sym;
      source.sym = var->expr;
    } else {
      // Pinned by this entry's guards: the value itself, with its type (a folded comparison is
      // still a bool).
      source.kind = ValueSource::Kind::Constant;
      source.constant = var->value;
    }
    auto placeholder = std::make_shared<Var>();
    placeholder->kind = Var::Kind::Input;
    placeholder->slot = static_cast<int>(exit.next_inputs.size());
    exit.next_inputs.push_back(source);
    exit.next_input_desc.push_back(desc);
    result = placeholder;
  }
  seen[var.get()] = result;
  return result;
}

// A break ends the graph at `node`: where it is (the site), what the node needs to run eagerly,
// the state to resume from, and how the resume frame's inputs are made and named.
void Tracer::build_break_exit(MachineState& state, const Node* node, BreakCause cause,
                              const std::string& reason, bool resume_at_node) {
  EntryExit& exit = out_.exit;
  exit.kind = EntryExit::Kind::Break;
  exit.run_node = !resume_at_node;
  exit.site = break_site(state, node, cause, reason);
  // The breaking node's own inputs (none when the resume frame runs the node itself).
  for (const Value* v : node->inputs()) {
    if (resume_at_node) break;
    exit.node_inputs.push_back(result_template(lookup(state, v)));
  }
  MachineState resume = resume_state(state, node, resume_at_node, exit);
  if (!resume_at_node) bind_break_outputs(node, resume.activations[static_cast<size_t>(activation_)], exit);
  name_resume_inputs(resume, exit);
  exit.resume = std::move(resume);
}

GraphBreakSite Tracer::break_site(const MachineState& state, const Node* node, BreakCause cause,
                                  const std::string& reason) {
  GraphBreakSite site;
  site.cause = cause;
  site.node = node;
  site.op = node->kind().toQualString();
  site.reason = reason;
  site.stack = stack_of(state, node);
  // Report the innermost frame in the user's own code (not torch's library files).
  for (auto it = site.stack.rbegin(); it != site.stack.rend(); ++it) {
    if (it->loc.known() && !is_library_file(it->loc.file)) {
      site.loc = it->loc;
      site.module_path = it->module_path;
      break;
    }
  }
  // Some nodes (attribute stores) carry no source range: use the line that computed their inputs.
  if (!site.loc.known()) {
    for (const Value* v : node->inputs()) {
      SourceLoc loc = locate(v->node());
      if (loc.known() && !is_library_file(loc.file)) {
        site.loc = loc;
        site.module_path = state.activations[static_cast<size_t>(activation_)].module_path;
        break;
      }
    }
  }
  if (!site.loc.known() && !site.stack.empty()) {
    site.loc = site.stack.back().loc;
    site.module_path = site.stack.back().module_path;
  }
  return site;
}

// The state to resume from: only values still needed after the node are kept, each exported as
// a resume-frame input.
MachineState Tracer::resume_state(const MachineState& state, const Node* node, bool resume_at_node, EntryExit& exit) {
  std::unordered_map<const Var*, VarPtr> seen;
  MachineState resume;
  resume.scopes = state.scopes;
  if (resume_at_node) resume.scopes.back().index -= 1;  // run() had moved past the node
  for (size_t a = 0; a < state.activations.size(); ++a) {
    const Activation& act = state.activations[a];
    Activation copy;
    copy.graph = act.graph;
    copy.module_path = act.module_path;
    copy.function = act.function;
    copy.call_site = act.call_site;
    copy.parent = act.parent;
    // The resume point in this activation: after the node (innermost) or after its call.
    const Node* at = static_cast<int>(a) == activation_ ? node : nullptr;
    if (!at) {
      for (size_t b = a + 1; b < state.activations.size(); ++b) {
        if (state.activations[b].parent == static_cast<int>(a)) at = state.activations[b].call_site;
      }
    }
    std::vector<const Node*> loops;
    for (const Scope& s : state.scopes) {
      if (s.activation == static_cast<int>(a) && s.kind == Scope::Kind::Loop) loops.push_back(s.owner);
    }
    size_t position = at ? program_.position(at) + (at == node && resume_at_node ? 0 : 1) : 0;
    // Visit values in a fixed order so the same break always lays out its inputs the same way.
    std::vector<std::pair<const Value*, VarPtr>> live;
    for (const auto& [value, var] : act.env) {
      if (!at || program_.live_at(value, position, loops)) live.emplace_back(value, var);
    }
    std::sort(live.begin(), live.end(), [](const auto& x, const auto& y) { return x.first->unique() < y.first->unique(); });
    for (const auto& [value, var] : live) copy.env[value] = export_value(var, exit, seen);
    resume.activations.push_back(std::move(copy));
  }
  return resume;
}

// The node's outputs: bools select the resume frame (like the branch of a data-dependent if),
// other values become its inputs.
void Tracer::bind_break_outputs(const Node* node, Activation& top, EntryExit& exit) {
  for (size_t r = 0; r < node->outputs().size(); ++r) {
    auto placeholder = std::make_shared<Var>();
    placeholder->kind = Var::Kind::Input;
    if (node->outputs()[r]->type()->kind() == c10::TypeKind::BoolType) {
      placeholder->slot = kOutcomeSlotBase + static_cast<int>(exit.outcome_results.size());
      exit.outcome_results.push_back(static_cast<int>(r));
    } else {
      placeholder->slot = static_cast<int>(exit.next_inputs.size());
      ValueSource source;
      source.kind = ValueSource::Kind::BreakResult;
      source.index = static_cast<int>(r);
      exit.next_inputs.push_back(source);
      FrameInput desc;
      desc.name = value_label(node->outputs()[r]);
      auto t = node->outputs()[r]->type();
      desc.kind = t->kind() == c10::TypeKind::TensorType ? FrameInputKind::Tensor
                  : t->kind() == c10::TypeKind::IntType  ? FrameInputKind::Int
                  : t->kind() == c10::TypeKind::FloatType ? FrameInputKind::Float
                                                          : FrameInputKind::Other;
      exit.next_input_desc.push_back(desc);
      exit.input_results.push_back(static_cast<int>(r));
    }
    top.env[node->outputs()[r]] = placeholder;
  }
}

// Resume-frame inputs are named after the values they carry, as the user wrote them.
void Tracer::name_resume_inputs(const MachineState& resume, EntryExit& exit) {
  // An item of a list or tuple is named by its container: `sizes[1]`.
  std::function<void(const VarPtr&, const std::string&)> name_input = [&](const VarPtr& var, const std::string& name) {
    if (var->kind == Var::Kind::List || var->kind == Var::Kind::Tuple) {
      for (size_t k = 0; k < var->items.size(); ++k) name_input(var->items[k], fmt::format("{}[{}]", name, k));
    } else if (var->kind == Var::Kind::Input && var->slot < kOutcomeSlotBase &&
               exit.next_input_desc[static_cast<size_t>(var->slot)].name.empty()) {
      exit.next_input_desc[static_cast<size_t>(var->slot)].name = name;
    }
  };
  for (const auto& act : resume.activations) {
    for (const auto& [value, var] : act.env) name_input(var, value_label(value));
  }
  for (size_t i = 0; i < exit.next_input_desc.size(); ++i) {
    if (exit.next_input_desc[i].name.empty()) exit.next_input_desc[i].name = fmt::format("v{}", i);
  }
}

MachineState resume_state_for_outcome(const MachineState& resume, const std::vector<bool>& outcome) {
  MachineState state = resume;
  for (auto& act : state.activations) {
    for (auto& [value, var] : act.env) {
      if (var->kind == Var::Kind::Input && var->slot >= kOutcomeSlotBase) {
        size_t r = static_cast<size_t>(var->slot - kOutcomeSlotBase);
        var = Var::constant(c10::IValue(static_cast<bool>(outcome.at(r))));
      }
    }
  }
  return state;
}

ResultTemplate Tracer::result_template(const VarPtr& var) {
  ResultTemplate t;
  if (!var) {
    t.leaf.kind = ValueSource::Kind::Constant;
    return t;
  }
  switch (var->kind) {
    case Var::Kind::List:
    case Var::Kind::Tuple:
      t.kind = var->kind == Var::Kind::List ? ResultTemplate::Kind::List : ResultTemplate::Kind::Tuple;
      t.element_type = var->type;
      for (const auto& item : var->items) t.items.push_back(result_template(item));
      break;
    case Var::Kind::Tensor:
    case Var::Kind::GraphValue:
      t.leaf.kind = ValueSource::Kind::Output;
      t.leaf.index = graph_output_index(var->slot);
      break;
    case Var::Kind::Scalar:
      if (var->expr && var->expr->dynamic) {
        t.leaf.kind = ValueSource::Kind::Sym;
        t.leaf.sym = var->expr;
        break;
      }
      [[fallthrough]];
    default:
      t.leaf.kind = ValueSource::Kind::Constant;
      t.leaf.constant = var->value;
  }
  return t;
}

void Tracer::build_return_exit(const VarPtr& result) {
  out_.exit.kind = EntryExit::Kind::Return;
  out_.exit.result = result_template(result);
}

}  // namespace tcprof
