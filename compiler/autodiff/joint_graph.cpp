#include "compiler/autodiff/joint_graph.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "compiler/autodiff/derivative_rules.h"
#include "compiler/autodiff/graph_builder.h"
#include "core/error.h"

namespace tcprof {
namespace {

template <typename F>
void for_each_slot(const Arg& a, F&& f) {
  if (a.kind == Arg::Kind::Slot) f(a.slot);
  for (const auto& item : a.items) for_each_slot(item, f);
}

bool has_sym(const Arg& a) {
  if (a.kind == Arg::Kind::Sym) return true;
  for (const auto& item : a.items) {
    if (has_sym(item)) return true;
  }
  return false;
}

bool carries_gradient(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() && v.toTensor().is_floating_point();
  if (v.isList() || v.isTuple()) {
    for (const auto& e : v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec()) {
      if (carries_gradient(e)) return true;
    }
  }
  return false;
}

c10::TypePtr type_of(const c10::IValue& v) {
  if (v.isTensor()) return c10::TensorType::get();
  if (v.isInt()) return c10::IntType::get();
  if (v.isDouble()) return c10::FloatType::get();
  if (v.isBool()) return c10::BoolType::get();
  if (v.isTensorList()) return c10::ListType::ofTensors();
  if (v.isIntList()) return c10::ListType::ofInts();
  return nullptr;  // not readable by an emitted op
}

std::string where(const GraphOp& op) {
  if (!op.loc.known()) return op.name;
  return fmt::format("{} at {}:{}", op.name, op.loc.file.substr(op.loc.file.find_last_of('/') + 1), op.loc.line);
}

// The rules' view of one forward op during the reverse walk.
class OpGrads : public GradContext {
 public:
  OpGrads(const GraphOp& op, GraphBuilder& b, const std::vector<c10::IValue>& examples, const std::vector<bool>& needs_grad,
          std::map<int, Val>& grads, std::map<int, std::vector<Val>>& item_grads)
      : op_(op), b_(b), examples_(examples), requires_(needs_grad), grads_(grads), items_(item_grads) {
    for (const auto& a : op.args) values_.push_back(value_of(a));
  }
  const GraphOp& op() const override { return op_; }
  BuildArg arg(size_t i) const override {
    const Arg& a = op_.args.at(i);
    if (a.kind == Arg::Kind::Slot) return Val{a.slot};
    return values_.at(i);
  }
  Val out(size_t i) const override { return {op_.outputs.at(i)}; }
  const c10::IValue& value(size_t i) const override { return values_.at(i); }
  const c10::IValue& out_value(size_t i) const override { return examples_[static_cast<size_t>(op_.outputs.at(i))]; }
  bool needs(size_t i) const override {
    if (i >= op_.args.size()) return false;
    bool any = false;
    for_each_slot(op_.args[i], [&](int s) { any = any || requires_[static_cast<size_t>(s)]; });
    return any;
  }
  Val grad(size_t out) const override {
    auto it = grads_.find(op_.outputs.at(out));
    return it == grads_.end() ? Val{-1} : it->second;
  }
  std::vector<Val> item_grads(size_t out) const override {
    auto it = items_.find(op_.outputs.at(out));
    if (it != items_.end()) return it->second;
    size_t n = out_value(out).isList() ? out_value(out).toListRef().size() : out_value(out).toTupleRef().elements().size();
    return std::vector<Val>(n, Val{-1});
  }
  void add(size_t i, Val g) override {
    if (!needs(i)) return;  // the ops computing g are dead code, which the partition drops
    const Arg& a = op_.args.at(i);
    if (a.kind != Arg::Kind::Slot) throw NoDerivative("a gradient for a list argument given as one tensor");
    accumulate(a.slot, in_dtype_of(a.slot, g));
  }
  void add_items(size_t i, const std::vector<Val>& g) override {
    const Arg& a = op_.args.at(i);
    if (a.kind == Arg::Kind::List) {  // a list written inline: each item is a slot of its own
      for (size_t k = 0; k < g.size() && k < a.items.size(); ++k) {
        if (g[k].slot >= 0 && a.items[k].kind == Arg::Kind::Slot && requires_[static_cast<size_t>(a.items[k].slot)]) {
          accumulate(a.items[k].slot, g[k]);
        }
      }
      return;
    }
    if (a.kind != Arg::Kind::Slot) return;
    std::vector<Val>& mine = items_[a.slot];
    mine.resize(std::max(mine.size(), g.size()), Val{-1});
    for (size_t k = 0; k < g.size(); ++k) {
      if (g[k].slot < 0) continue;
      mine[k] = mine[k].slot < 0 ? g[k] : b_.emit1("aten::add", {mine[k], g[k]}, &op_);
    }
  }
  GraphBuilder& builder() override { return b_; }

 private:
  c10::IValue value_of(const Arg& a) const {
    switch (a.kind) {
      case Arg::Kind::Slot: return examples_[static_cast<size_t>(a.slot)];
      case Arg::Kind::Constant: return a.constant;
      case Arg::Kind::Sym: throw NoDerivative("a symbolic size");
      case Arg::Kind::List: {
        std::vector<c10::IValue> items;
        for (const auto& item : a.items) items.push_back(value_of(item));
        if (!a.element_type) return c10::ivalue::Tuple::create(std::move(items));
        c10::impl::GenericList list(a.element_type);
        for (auto& item : items) list.push_back(std::move(item));
        return list;
      }
    }
    return {};
  }
  // Autograd hands every input a gradient of the input's own dtype (the engine casts it). A rule's
  // gradient has the op's output dtype, which differs where the op promoted (f32 / f64 -> f64):
  // without the cast an f32 convolution's backward got an f64 gradient and LibTorch threw
  // (fuzz_graphs --backward --conv --case 246370209107220).
  Val in_dtype_of(int slot, Val g) {
    if (op_.outputs.empty()) return g;
    const c10::IValue& in = examples_[static_cast<size_t>(slot)];
    const c10::IValue& out = examples_[static_cast<size_t>(op_.outputs[0])];
    if (!in.isTensor() || !out.isTensor() || !in.toTensor().is_floating_point()) return g;
    const at::ScalarType want = in.toTensor().scalar_type();
    if (out.toTensor().scalar_type() == want) return g;
    return b_.emit1("aten::to", {g, static_cast<int64_t>(want)}, &op_);
  }
  void accumulate(int slot, Val g) {
    auto it = grads_.find(slot);
    if (it == grads_.end()) grads_[slot] = g;
    else it->second = b_.emit1("aten::add", {it->second, g}, &op_);
  }

  const GraphOp& op_;
  GraphBuilder& b_;
  const std::vector<c10::IValue>& examples_;
  const std::vector<bool>& requires_;
  std::map<int, Val>& grads_;
  std::map<int, std::vector<Val>>& items_;
  std::vector<c10::IValue> values_;
};

}  // namespace

// A list written with parameters in it (`torch.cat([self.p, self.p], 1)`) is captured as one
// constant when every item is one: its items become arguments of their own, so that each parameter
// is lifted and gets its gradient (fuzz_graphs --backward --conv --pool, case 36598186235621: the
// list stayed a constant, was folded, and the parameter's gradient lost its share).
static bool constant_list_holds_parameter(const Arg& a) {
  if (a.kind != Arg::Kind::Constant || !a.constant.isList()) return false;
  for (const c10::IValue& v : a.constant.toList().vec()) {
    if (v.isTensor() && v.toTensor().requires_grad()) return true;
  }
  return false;
}

bool holds_parameter_requiring_grad(const Arg& a) {
  if (a.kind == Arg::Kind::Constant && a.constant.isTensor() && a.constant.toTensor().requires_grad()) return true;
  if (constant_list_holds_parameter(a)) return true;
  for (const auto& item : a.items) {
    if (holds_parameter_requiring_grad(item)) return true;
  }
  return false;
}

void split_constant_lists_holding_parameters(Arg& a) {
  for (auto& item : a.items) split_constant_lists_holding_parameters(item);
  if (!constant_list_holds_parameter(a)) return;
  const c10::List<c10::IValue> list = a.constant.toList();
  Arg split;
  split.kind = Arg::Kind::List;
  split.element_type = list.elementType();
  for (const c10::IValue& v : list.vec()) {
    Arg item;
    item.constant = v;
    split.items.push_back(std::move(item));
  }
  a = std::move(split);
}

CapturedGraph lift_parameters(const CapturedGraph& captured, std::vector<at::Tensor>* parameters) {
  CapturedGraph g = captured;
  for (auto& op : g.ops) {
    for (auto& a : op.args) split_constant_lists_holding_parameters(a);
  }
  std::map<const c10::TensorImpl*, int> index;
  std::function<void(const Arg&)> find = [&](const Arg& a) {
    if (a.kind == Arg::Kind::Constant && a.constant.isTensor() && a.constant.toTensor().requires_grad()) {
      const at::Tensor& t = a.constant.toTensor();
      if (index.emplace(t.unsafeGetTensorImpl(), static_cast<int>(parameters->size())).second) parameters->push_back(t);
    }
    for (const auto& item : a.items) find(item);
  };
  for (const auto& op : g.ops) {
    for (const auto& a : op.args) find(a);
  }
  const int n_in = static_cast<int>(g.inputs.size()), lifted = static_cast<int>(parameters->size());
  auto moved = [&](int slot) { return slot < n_in ? slot : slot + lifted; };
  std::function<void(Arg&)> rewrite = [&](Arg& a) {
    if (a.kind == Arg::Kind::Slot) a.slot = moved(a.slot);
    if (a.kind == Arg::Kind::Constant && a.constant.isTensor()) {
      auto it = index.find(a.constant.toTensor().unsafeGetTensorImpl());
      if (it != index.end()) {
        a.kind = Arg::Kind::Slot;
        a.slot = n_in + it->second;
        a.constant = c10::IValue();
      }
    }
    for (auto& item : a.items) rewrite(item);
  };
  CapturedGraph out = g;
  for (int p = 0; p < lifted; ++p) {
    FrameInput in;
    in.name = fmt::format("param{}", p);
    out.inputs.insert(out.inputs.begin() + n_in + p, in);
  }
  for (auto& op : out.ops) {
    for (auto& a : op.args) rewrite(a);
    for (int& s : op.outputs) s = moved(s);
  }
  for (int& s : out.outputs) s = moved(s);
  out.num_slots = g.num_slots + lifted;
  return out;
}

std::optional<JointGraph> build_joint_graph(const CapturedGraph& g, const std::vector<c10::IValue>& examples,
                                            const std::vector<bool>& differentiable, std::string* why_not) {
  for (const auto& in : g.inputs) {
    for (bool d : in.dynamic_dims) {
      if (d) return *why_not = "dynamic shapes (the backward graph is compiled for static shapes)", std::nullopt;
    }
  }
  // Which slots carry a gradient: those computed from a differentiable input.
  std::vector<bool> needs_grad(static_cast<size_t>(g.num_slots), false);
  for (size_t i = 0; i < differentiable.size() && i < g.inputs.size(); ++i) needs_grad[i] = differentiable[i];
  for (const auto& op : g.ops) {
    bool any = false;
    for (const auto& a : op.args) {
      if (has_sym(a)) return *why_not = fmt::format("dynamic shapes ({} has a symbolic size)", where(op)), std::nullopt;
      for_each_slot(a, [&](int s) { any = any || needs_grad[static_cast<size_t>(s)]; });
    }
    if (!any || is_non_differentiable(op.name)) continue;
    // An in-place op the functionalize pass had to keep (its target is read afterwards, or is an
    // output) changes a value other ops' gradients were derived from: not differentiated here.
    if (!op.name.empty() && op.name.back() == '_') {
      return *why_not = fmt::format("in-place {} on a value that needs a gradient", where(op)), std::nullopt;
    }
    for (int s : op.outputs) needs_grad[static_cast<size_t>(s)] = carries_gradient(examples[static_cast<size_t>(s)]);
  }
  JointGraph joint;
  joint.forward = g;
  CapturedGraph& bwd = joint.backward;
  bwd.num_slots = g.num_slots;
  bwd.owned_nodes = nullptr;
  std::vector<c10::TypePtr> types;
  for (const auto& v : examples) types.push_back(type_of(v));
  std::map<int, Val> grads;
  std::map<int, std::vector<Val>> item_grads;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    int s = g.outputs[k];
    if (!needs_grad[static_cast<size_t>(s)]) continue;
    if (!examples[static_cast<size_t>(s)].isTensor()) {
      return *why_not = "the graph returns a list or tuple of tensors that need gradients", std::nullopt;
    }
    int slot = bwd.num_slots++;
    types.push_back(c10::TensorType::get());
    joint.grad_output_slots.push_back(slot);
    joint.grad_outputs.push_back(static_cast<int>(k));
  }
  GraphBuilder builder(bwd, types);
  for (size_t k = 0; k < joint.grad_output_slots.size(); ++k) {
    int s = g.outputs[static_cast<size_t>(joint.grad_outputs[k])];
    Val gk{joint.grad_output_slots[k]};
    auto it = grads.find(s);
    if (it == grads.end()) grads[s] = gk;
    else it->second = builder.emit1("aten::add", {it->second, gk});  // one value returned twice
  }
  for (auto op = g.ops.rbegin(); op != g.ops.rend(); ++op) {
    bool has_grad = false;
    for (int s : op->outputs) has_grad = has_grad || grads.count(s) || item_grads.count(s);
    if (!has_grad || is_non_differentiable(op->name)) continue;
    const DerivativeRule* rule = derivative_rule(op->name);
    if (!rule) return *why_not = fmt::format("no derivative rule for {}", where(*op)), std::nullopt;
    try {
      OpGrads ctx(*op, builder, examples, needs_grad, grads, item_grads);
      (*rule)(ctx);
    } catch (const NoDerivative& e) {
      return *why_not = fmt::format("{}: {}", where(*op), e.what()), std::nullopt;
    } catch (const Error& e) {
      return *why_not = fmt::format("{}: {}", where(*op), e.what()), std::nullopt;
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    auto it = grads.find(static_cast<int>(i));
    if (!needs_grad[i] || it == grads.end()) continue;
    joint.grad_inputs.push_back(static_cast<int>(i));
    joint.grad_input_slots.push_back(it->second.slot);
  }
  return joint;
}

// Pointwise ops cheap enough to run again in the backward instead of keeping their result alive
// between the passes (AOTAutograd's default partitioner recomputes such chains too).
bool recomputable(const std::string& name) {
  static const std::set<std::string> ops = {
      "aten::relu", "aten::gelu", "aten::silu", "aten::sigmoid", "aten::tanh", "aten::hardswish",
      "aten::hardsigmoid", "aten::relu6", "aten::hardtanh", "aten::neg", "aten::exp", "aten::add",
      "aten::sub", "aten::mul", "aten::div", "aten::clamp", "aten::clamp_min", "aten::clamp_max"};
  return ops.count(name) > 0;
}

int64_t bytes_of(const c10::IValue& v) { return v.isTensor() ? static_cast<int64_t>(v.toTensor().nbytes()) : 0; }

// Backward ops that a recomputed value fuses into: the generated kernel that runs them can compute
// it on the fly. A GEMM, convolution or LibTorch call reading it needs it in memory, so recomputing
// it there would cost a whole extra pass.
bool fuses_recomputation(const std::string& name) {
  static const std::set<std::string> ops = {
      "aten::where", "aten::masked_fill", "aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge",
      "aten::erf", "aten::sqrt", "aten::rsqrt", "aten::reciprocal", "aten::log", "aten::pow", "aten::abs",
      "aten::sin", "aten::cos", "aten::mean", "aten::sum", "aten::gelu_backward"};
  return recomputable(name) || ops.count(name) > 0;
}

// The partition rule's second half: a saved activation made by a recomputable op from values the
// backward has anyway (graph inputs, parameters, other saved values), none larger than it, and
// read in the backward only by ops it fuses into, is recomputed instead of saved. Repeats until
// nothing changes, so chains go too. `readers`: the backward ops reading each forward slot. Returns
// the forward ops to run again, in forward order; removes their outputs from `saved`.
std::vector<size_t> choose_recomputation(const CapturedGraph& fwd, const std::vector<c10::IValue>& examples,
                                         std::map<int, std::vector<std::string>> readers, std::set<int>& saved) {
  const int n_in = static_cast<int>(fwd.inputs.size());
  // A forward that keeps an in-place op (one functionalize could not remove) changes a value after
  // it was made, maybe through a view: its producer run again in the backward would give the value
  // before the change (fuzz case --backward 101709309494417: relu(x) then mul_(-2), and maximum's
  // gradient mask recomputed from relu alone). Then nothing is recomputed: the backward reads the
  // saved tensors, which hold the changed values its ops saw (eager autograd refuses a program
  // that changes a tensor after an op saved it, so no valid one changes them later).
  const bool mutates = std::any_of(fwd.ops.begin(), fwd.ops.end(),
                                   [](const GraphOp& op) { return !op.name.empty() && op.name.back() == '_'; });
  if (mutates) return {};
  std::map<int, size_t> producer;
  for (size_t i = 0; i < fwd.ops.size(); ++i) {
    for (int s : fwd.ops[i].outputs) producer[s] = i;
  }
  const std::set<int> outputs(fwd.outputs.begin(), fwd.outputs.end());  // alive after the forward anyway
  std::set<size_t> chosen;
  for (bool changed = true; changed;) {
    changed = false;
    for (int s : std::set<int>(saved)) {
      auto it = producer.find(s);
      if (s < n_in || it == producer.end() || outputs.count(s)) continue;
      const GraphOp& op = fwd.ops[it->second];
      if (!recomputable(op.name) || op.outputs.size() != 1 || !examples[static_cast<size_t>(s)].isTensor()) continue;
      bool ok = std::all_of(readers[s].begin(), readers[s].end(), fuses_recomputation);
      for (const auto& a : op.args) {
        if (a.kind == Arg::Kind::List || a.kind == Arg::Kind::Sym) ok = false;
        if (a.kind != Arg::Kind::Slot) continue;
        const bool available = a.slot < n_in || saved.count(a.slot);
        ok = ok && available && bytes_of(examples[static_cast<size_t>(a.slot)]) <= bytes_of(examples[static_cast<size_t>(s)]);
      }
      if (!ok) continue;
      saved.erase(s);
      for (const auto& a : op.args) {
        if (a.kind != Arg::Kind::Slot) continue;
        saved.insert(a.slot);
        readers[a.slot].push_back(op.name);  // the recomputed op reads them in the backward now
      }
      chosen.insert(it->second);
      changed = true;
    }
  }
  return {chosen.begin(), chosen.end()};
}

TrainingGraphs partition_joint_graph(JointGraph joint, const std::vector<c10::IValue>& examples) {
  TrainingGraphs t;
  const CapturedGraph& fwd = joint.forward;
  const int n_fwd = fwd.num_slots, n_in = static_cast<int>(fwd.inputs.size());
  // Dead code first: ops whose results no gradient needs (a rule's term for an argument that
  // turned out not to need one) must not make the forward save their inputs.
  std::set<int> live(joint.grad_input_slots.begin(), joint.grad_input_slots.end());
  std::vector<bool> keep(joint.backward.ops.size(), false);
  for (size_t i = joint.backward.ops.size(); i-- > 0;) {
    const GraphOp& op = joint.backward.ops[i];
    for (int s : op.outputs) keep[i] = keep[i] || live.count(s);
    if (!keep[i]) continue;
    for (const auto& a : op.args) for_each_slot(a, [&](int s) { live.insert(s); });
  }
  std::set<int> saved;
  for (int s : live) {
    if (s < n_fwd) saved.insert(s);
  }
  std::map<int, std::vector<std::string>> readers;
  for (size_t i = 0; i < joint.backward.ops.size(); ++i) {
    if (!keep[i]) continue;
    for (const auto& a : joint.backward.ops[i].args) {
      for_each_slot(a, [&](int s) {
        if (s < n_fwd) readers[s].push_back(joint.backward.ops[i].name);
      });
    }
  }
  const std::vector<size_t> recompute = choose_recomputation(fwd, examples, std::move(readers), saved);
  t.forward = fwd;
  t.graph_outputs = fwd.outputs.size();
  CapturedGraph& b = t.backward;
  b.owned_nodes = joint.backward.owned_nodes;
  b.step_prefix = "bwd ";
  std::map<int, int> slot;  // joint slot -> backward slot
  for (int s : saved) {
    slot[s] = static_cast<int>(b.inputs.size());
    FrameInput in;
    const c10::IValue& v = examples[static_cast<size_t>(s)];
    in.kind = v.isTensor() ? FrameInputKind::Tensor : v.isInt() ? FrameInputKind::Int
              : v.isDouble() ? FrameInputKind::Float : v.isBool() ? FrameInputKind::Bool : FrameInputKind::Other;
    in.name = s < n_in ? "saved " + fwd.inputs[static_cast<size_t>(s)].name : fmt::format("saved %{}", s);
    b.inputs.push_back(in);
    b.num_slots++;
    t.backward_examples.push_back(v);
    if (s < n_in) {
      t.saved_inputs.push_back(s);
    } else {
      t.saved_inputs.push_back(-1);
      t.forward.outputs.push_back(s);
      if (v.isTensor()) t.saved_bytes += static_cast<int64_t>(v.toTensor().nbytes());
    }
  }
  for (size_t k = 0; k < joint.grad_output_slots.size(); ++k) {
    slot[joint.grad_output_slots[k]] = b.num_slots++;
    FrameInput in;
    in.name = fmt::format("grad of output {}", joint.grad_outputs[k]);
    b.inputs.push_back(in);
    const at::Tensor& out = examples[static_cast<size_t>(fwd.outputs[static_cast<size_t>(joint.grad_outputs[k])])].toTensor();
    t.backward_examples.push_back(at::ones_like(out, at::MemoryFormat::Contiguous));
  }
  t.grad_outputs = joint.grad_outputs;
  std::function<void(Arg&)> renumber = [&](Arg& a) {
    if (a.kind == Arg::Kind::Slot) a.slot = slot.at(a.slot);
    for (auto& item : a.items) renumber(item);
  };
  for (size_t i : recompute) {  // first, in forward order: the backward's ops read their results
    GraphOp op = fwd.ops[i];
    for (auto& a : op.args) renumber(a);
    for (int& s : op.outputs) s = slot[s] = b.num_slots++;
    b.ops.push_back(std::move(op));
    t.recomputed.push_back(fwd.ops[i].name);
  }
  for (size_t i = 0; i < joint.backward.ops.size(); ++i) {
    if (!keep[i]) continue;
    GraphOp op = joint.backward.ops[i];
    for (auto& a : op.args) renumber(a);
    for (int& s : op.outputs) s = slot[s] = b.num_slots++;
    b.ops.push_back(std::move(op));
  }
  for (size_t j = 0; j < joint.grad_inputs.size(); ++j) {
    b.outputs.push_back(slot.at(joint.grad_input_slots[j]));
    t.grad_inputs.push_back(joint.grad_inputs[j]);
  }
  return t;
}

int TrainingGraphs::saved_activations() const {
  int n = 0;
  for (int s : saved_inputs) n += s < 0;
  return n;
}

std::string TrainingGraphs::recomputed_text() const {
  std::map<std::string, int> counts;
  for (const auto& name : recomputed) ++counts[name];
  std::string text;
  for (const auto& [name, n] : counts) text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", name, n);
  return text.empty() ? "nothing" : text;
}

std::string TrainingGraphs::summary() const {
  const int activations = saved_activations();
  return fmt::format("# training: backward graph of {} ops; it saves {} inputs and {} activations ({:.2f} MiB at these "
                     "shapes) and recomputes {}; {} gradients\n",
                     backward.ops.size(), saved_inputs.size() - static_cast<size_t>(activations), activations,
                     static_cast<double>(saved_bytes) / (1024.0 * 1024.0), recomputed_text(), grad_inputs.size());
}

}  // namespace tcprof
