// The capture interpreter, one node at a time: constants and attributes, structure (tuples and
// lists), shape queries and shape arithmetic (evaluated at capture, symbolically when dynamic),
// graph breaks, and tensor ops recorded into the graph.
#include <algorithm>

#include <ATen/core/grad_mode.h>
#include <fmt/format.h>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "compiler/ir/op_dispatch.h"
#include "compiler/frontend/shape_rules.h"
#include "compiler/frontend/tracer.h"
#include "core/error.h"

namespace tcprof {

using torch::jit::Node;
using torch::jit::Value;
namespace prim = c10::prim;
namespace aten = c10::aten;

VarPtr& Tracer::env(MachineState& state, const Value* v) {
  return state.activations[static_cast<size_t>(activation_)].env[v];
}

VarPtr Tracer::lookup(MachineState& state, const Value* v) {
  auto& e = state.activations[static_cast<size_t>(activation_)].env;
  auto it = e.find(v);
  if (it == e.end()) {
    throw Error(ErrorKind::Internal, fmt::format("tcprof capture: value %{} used before it was defined",
                                                 v->debugName()));
  }
  return it->second;
}

c10::IValue Tracer::value_of(const VarPtr& var) const {
  if (!var) return c10::IValue();
  if (var->kind == Var::Kind::List) {
    c10::TypePtr element = var->type ? var->type : c10::AnyType::get();
    c10::impl::GenericList list(element);
    for (const auto& item : var->items) list.push_back(value_of(item));
    return list;
  }
  if (var->kind == Var::Kind::Tuple) {
    std::vector<c10::IValue> values;
    for (const auto& item : var->items) values.push_back(value_of(item));
    return c10::ivalue::Tuple::create(std::move(values));
  }
  return var->value;
}

Arg Tracer::to_arg(const VarPtr& var) {
  Arg arg;
  switch (var->kind) {
    case Var::Kind::Tensor:
    case Var::Kind::GraphValue:
      arg.kind = Arg::Kind::Slot;
      arg.slot = var->slot;
      break;
    case Var::Kind::Scalar:
      if (var->expr && var->expr->dynamic) {
        arg.kind = Arg::Kind::Sym;
        arg.sym = var->expr;
        arg.program = SymProgram(*var->expr);
        break;
      }
      arg.kind = Arg::Kind::Constant;
      arg.constant = var->value;
      break;
    case Var::Kind::List:
    case Var::Kind::Tuple:
      arg.kind = Arg::Kind::List;
      arg.element_type = var->kind == Var::Kind::List ? (var->type ? var->type : c10::AnyType::get()) : nullptr;
      for (const auto& item : var->items) arg.items.push_back(to_arg(item));
      break;
    default:
      arg.kind = Arg::Kind::Constant;
      arg.constant = var->value;
  }
  return arg;
}

void Tracer::add_decision_guard(const VarPtr& cond, bool taken, const Node* node) {
  if (eager_ || !cond || cond->kind != Var::Kind::Scalar || !cond->expr || cond->expr->op == SymOp::Const) return;
  std::string text = to_string(*cond->expr, input_names());
  if (!taken) text = "not (" + text + ")";
  for (const auto& g : out_.guards.guards()) {
    if (g.kind == GuardKind::ShapeExpr && g.text == text) return;
  }
  Guard g;
  g.kind = GuardKind::ShapeExpr;
  g.expr = cond->expr;
  g.expected = taken ? 1 : 0;
  g.implied = !cond->expr->dynamic;
  g.text = text;
  g.loc = locate(node);
  out_.guards.add(std::move(g));
}

// Under grad mode a captured graph's gradients depend on which module tensors require grad (the
// training graph lifts exactly those to inputs): freezing or unfreezing one must recompile, as
// Dynamo's guards on parameters do. Without grad mode the GradMode guard already covers it.
void Tracer::guard_param_requires_grad(const c10::intrusive_ptr<c10::ivalue::Object>& object, const std::string& name,
                                       const at::Tensor& value, const std::string& path, const Node* node) {
  if (!at::GradMode::is_enabled() || !value.defined() || !value.is_floating_point()) return;
  Guard g;
  g.kind = GuardKind::ParamRequiresGrad;
  g.object = object;
  g.attr_slot = object->type()->getAttributeSlot(name);
  g.expected = value.requires_grad();
  g.text = fmt::format("self.{}.requires_grad == {}", path, value.requires_grad() ? "True" : "False");
  for (const auto& existing : out_.guards.guards()) {
    if (existing.kind == GuardKind::ParamRequiresGrad && existing.text == g.text) return;
  }
  g.loc = locate(node);
  for (size_t u = 0; u < node->output()->uses().size() && !g.loc.known(); ++u) {
    g.loc = locate(node->output()->uses()[u].user);
  }
  out_.guards.add(std::move(g));
}

void Tracer::specialize(const VarPtr& var, const Node* node) {
  if (eager_ || !var) return;
  if (var->kind == Var::Kind::List || var->kind == Var::Kind::Tuple) {
    for (const auto& item : var->items) specialize(item, node);
    return;
  }
  if (var->kind != Var::Kind::Scalar || !var->expr || var->expr->op == SymOp::Const) return;
  if (!var->value.isInt()) return;
  auto eq = SymExpr::binary(SymOp::Eq, var->expr, SymExpr::constant(var->value.toInt()));
  add_decision_guard(Var::scalar(c10::IValue(true), eq), true, node);
}

std::vector<std::string> Tracer::input_names() const {
  std::vector<std::string> names;
  if (frame_) {
    for (const auto& in : frame_->inputs) names.push_back(in.name);
  }
  return names;
}

namespace {

// `B, T = x.shape` on an input of another rank: name the input, the line and the rank the model
// expects, instead of the unpack instruction (which has no source line of its own).
[[noreturn]] void throw_unpack_mismatch(const Node* node, size_t got) {
  const Node* producer = node->input(0)->node();
  SourceLoc loc = locate(producer);
  for (const Value* out : node->outputs()) {
    for (const auto& use : out->uses()) {
      if (!loc.known()) loc = locate(use.user);
    }
  }
  size_t want = node->outputs().size();
  std::string where = loc.known() ? fmt::format(" at {}:{}: {}", loc.file, loc.line, loc.text.substr(std::min(loc.text.size(), loc.text.find_first_not_of(' ')))) : "";
  if (producer->kind() == aten::size && producer->inputs().size() == 1) {
    throw Error(ErrorKind::Input, fmt::format("'{}' has {} dimensions, but the model unpacks its shape into {} values{}\n"
                                              "  give it a {}-D shape in --input",
                                              value_label(producer->input(0)), got, want, where, want));
  }
  throw Error(ErrorKind::Input, fmt::format("the model unpacks {} values from one that has {}{}", want, got, where));
}

bool used_as_condition(const Value* v, bool* loop) {
  for (const auto& use : v->uses()) {
    const Node* user = use.user;
    if (user->kind() == prim::If && use.offset == 0) {
      *loop = false;
      return true;
    }
    if (user->kind() == prim::Loop && use.offset == 1) {
      *loop = true;
      return true;
    }
    // The loop condition of the next iteration is the body's first return value.
    const auto* block = user->owningBlock();
    if (block && user == block->return_node() && use.offset == 0 && block->owningNode() &&
        block->owningNode()->kind() == prim::Loop) {
      *loop = true;
      return true;
    }
  }
  return false;
}

bool is_dynamic_shape_op(c10::Symbol kind) {
  static const char* names[] = {"aten::nonzero", "aten::nonzero_numpy", "aten::argwhere",
                                "aten::masked_select", "aten::unique", "aten::_unique",
                                "aten::_unique2", "aten::unique_consecutive", "aten::unique_dim",
                                "aten::unique_dim_consecutive"};
  for (const char* n : names) {
    if (kind == c10::Symbol::fromQualString(n)) return true;
  }
  return false;
}

bool is_tensor_var(const VarPtr& v) { return v && v->kind == Var::Kind::Tensor; }

}  // namespace

std::optional<std::pair<BreakCause, std::string>> Tracer::classify_break(
    const Node* node, const std::vector<VarPtr>& in) const {
  auto kind = node->kind();
  if (kind == prim::Print) return {{BreakCause::Print, "print() is a side effect a graph cannot perform"}};
  if (kind == aten::warn) return {{BreakCause::Warn, "warnings.warn() is a side effect a graph cannot perform"}};
  if (kind == prim::RaiseException) {
    std::string msg = !in.empty() && in[0]->value.isString() ? in[0]->value.toStringRef() : std::string();
    return {{BreakCause::Raise, msg.empty() ? "raise / failed assert runs eagerly"
                                            : fmt::format("raise / failed assert: {}", msg)}};
  }
  if (kind == prim::SetAttr) {
    return {{BreakCause::ModuleStateMutation,
             fmt::format("forward assigns to module attribute '{}'", node->s(c10::attr::name))}};
  }
  bool reads_tensor = !in.empty() && is_tensor_var(in[0]);
  if (reads_tensor && (kind == aten::Bool || kind == aten::is_nonzero)) {
    bool loop = false;
    if (used_as_condition(node->output(), &loop)) {
      return {{loop ? BreakCause::DataDependentLoop : BreakCause::DataDependentIf,
               loop ? "loop condition depends on tensor data"
                    : "if-statement condition depends on tensor data"}};
    }
    return {{BreakCause::TensorToScalar, "bool(tensor) reads tensor data into a Python bool"}};
  }
  if (reads_tensor && (kind == aten::Int || kind == aten::Float || kind == aten::item ||
                       kind == aten::ScalarImplicit || kind == aten::IntImplicit ||
                       kind == aten::FloatImplicit)) {
    return {{BreakCause::TensorToScalar,
             fmt::format("{} reads tensor data into a Python number", node->kind().toUnqualString())}};
  }
  if (reads_tensor && (kind == prim::tolist || kind == c10::Symbol::fromQualString("aten::tolist"))) {
    return {{BreakCause::TensorToList, "tolist() copies tensor data into a Python list"}};
  }
  if (is_dynamic_shape_op(kind)) {
    return {{BreakCause::DynamicOutputShape,
             fmt::format("{} has an output shape that depends on tensor data", kind.toQualString())}};
  }
  if (kind == aten::repeat_interleave && in.size() >= 2 && is_tensor_var(in[1])) {
    return {{BreakCause::DynamicOutputShape, "repeat_interleave with tensor repeats has a data-dependent size"}};
  }
  if (kind == aten::index && in.size() >= 2) {
    c10::IValue indices = value_of(in[1]);
    if (indices.isList()) {
      for (const auto& idx : indices.toListRef()) {
        if (idx.isTensor() && (idx.toTensor().scalar_type() == at::kBool || idx.toTensor().scalar_type() == at::kByte)) {
          return {{BreakCause::DynamicOutputShape, "boolean-mask indexing has a data-dependent output size"}};
        }
      }
    }
  }
  for (const auto& v : in) {
    if (v->kind == Var::Kind::GraphValue && (v->value.isGenericDict() || v->value.isObject() || v->value.isString())) {
      return {{BreakCause::UnsupportedValue,
               fmt::format("{} consumes a {} computed at run time", kind.toQualString(), v->value.tagKind())}};
    }
  }
  for (const Value* o : node->outputs()) {
    auto k = o->type()->kind();
    // Built from values that change between calls passing the guards (tensors, dynamic sizes).
    if ((k == c10::TypeKind::DictType || k == c10::TypeKind::ClassType || k == c10::TypeKind::StringType) &&
        std::any_of(in.begin(), in.end(), [](const VarPtr& v) { return !v->is_static(); })) {
      return {{BreakCause::UnsupportedValue,
               fmt::format("{} builds a {} from run-time values", kind.toQualString(), o->type()->str())}};
    }
  }
  if (!has_operation(node)) {
    return {{BreakCause::UnsupportedOp, fmt::format("{} has no operator tcprof can run", kind.toQualString())}};
  }
  return std::nullopt;
}

// Tuples, lists and casts: handled at capture time when their structure is known.
bool Tracer::handle_structural(MachineState& state, const Node* node) {
  auto kind = node->kind();
  auto in = [&](size_t i) { return lookup(state, node->input(i)); };
  if (kind == prim::TupleConstruct || kind == prim::ListConstruct) {
    auto var = std::make_shared<Var>();
    var->kind = kind == prim::TupleConstruct ? Var::Kind::Tuple : Var::Kind::List;
    if (kind == prim::ListConstruct) var->type = node->output()->type()->expect<c10::ListType>()->getElementType();
    bool all_constant = true;
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      var->items.push_back(in(i));
      all_constant = all_constant && var->items.back()->is_constant();
    }
    var->value = value_of(var);
    env(state, node->output()) = all_constant || eager_ ? Var::constant(var->value) : VarPtr(var);
    return true;
  }
  if (kind == prim::TupleUnpack || kind == prim::ListUnpack) {
    VarPtr v = in(0);
    if (v->kind == Var::Kind::Tuple || v->kind == Var::Kind::List) {
      if (v->items.size() != node->outputs().size()) throw_unpack_mismatch(node, v->items.size());
      for (size_t i = 0; i < node->outputs().size(); ++i) env(state, node->outputs()[i]) = v->items[i];
      return true;
    }
    if (v->kind == Var::Kind::Constant || v->kind == Var::Kind::Scalar) {
      auto elements = v->value.isTuple() ? v->value.toTupleRef().elements().vec() : v->value.toListRef().vec();
      if (elements.size() != node->outputs().size()) throw_unpack_mismatch(node, elements.size());
      for (size_t i = 0; i < elements.size(); ++i) {
        env(state, node->outputs()[i]) = v->is_constant() ? Var::constant(elements[i]) : Var::scalar(elements[i], nullptr);
      }
      return true;
    }
    return false;
  }
  if ((kind == prim::TupleIndex || kind == aten::__getitem__) && node->inputs().size() == 2) {
    VarPtr v = in(0), idx = in(1);
    if ((v->kind == Var::Kind::Tuple || v->kind == Var::Kind::List) && idx->value.isInt() && idx->is_static()) {
      specialize(idx, node);
      int64_t i = idx->value.toInt();
      if (i < 0) i += static_cast<int64_t>(v->items.size());
      if (i < 0 || i >= static_cast<int64_t>(v->items.size())) return false;
      env(state, node->output()) = v->items[static_cast<size_t>(i)];
      return true;
    }
    return false;
  }
  if (kind == aten::len && node->inputs().size() == 1) {
    VarPtr v = in(0);
    if (v->kind == Var::Kind::List) {
      int64_t n = static_cast<int64_t>(v->items.size());
      env(state, node->output()) = Var::scalar(c10::IValue(n), SymExpr::constant(n));
      return true;
    }
    return false;
  }
  if (kind == prim::unchecked_cast) {
    env(state, node->output()) = in(0);
    return true;
  }
  if (kind == aten::__is__ || kind == aten::__isnot__) {
    VarPtr a = in(0), b = in(1);
    bool a_tensor = a->kind == Var::Kind::Tensor, b_tensor = b->kind == Var::Kind::Tensor;
    if (a_tensor && b_tensor) {
      // Tensor identity (`q is k` in attention): decided now from the real tensors. Between two
      // frame inputs it depends on the caller, so it is guarded.
      bool same = a->slot == b->slot || a->value.toTensor().is_same(b->value.toTensor());
      int inputs = static_cast<int>(out_.graph.inputs.size());
      if (!eager_ && a->slot != b->slot && a->slot < inputs && b->slot < inputs) {
        Guard g;
        g.kind = GuardKind::SameTensor;
        g.input = a->slot;
        g.dim = b->slot;
        g.expected = same;
        g.text = fmt::format("({} is {}) == {}", frame_->inputs[static_cast<size_t>(a->slot)].name,
                             frame_->inputs[static_cast<size_t>(b->slot)].name, same ? "True" : "False");
        g.loc = locate(node);
        out_.guards.add(std::move(g));
      }
      env(state, node->output()) = Var::scalar(c10::IValue(kind == aten::__is__ ? same : !same), nullptr);
      return true;
    }
    bool a_none = a->is_constant() && a->value.isNone(), b_none = b->is_constant() && b->value.isNone();
    if (!a_none && !b_none) return false;
    // A value that is not a constant is never None here: tensors and numbers flow in graphs.
    bool same = (a_none && b_none) || (a_none ? (b->is_constant() && b->value.isNone())
                                              : (a->is_constant() && a->value.isNone()));
    env(state, node->output()) = Var::constant(c10::IValue(kind == aten::__is__ ? same : !same));
    return true;
  }
  if (kind == prim::isinstance) {
    VarPtr v = in(0);
    bool result = false;
    for (const auto& t : node->tys(c10::attr::types)) {
      if (v->value.type()->isSubtypeOf(*t)) result = true;
    }
    env(state, node->output()) = Var::constant(c10::IValue(result));
    return true;
  }
  if (kind == prim::Uninitialized) {
    env(state, node->output()) = Var::constant(c10::IValue());
    return true;
  }
  if (kind == aten::append && node->inputs().size() == 2 && in(0)->kind == Var::Kind::Constant && in(0)->value.isList()) {
    // A list built from constants (`p = []` before a loop of appends) is a constant until it is
    // appended to; from here on it is a list of traced values. Appending to the constant itself
    // would grow one list object shared by every later call (stale items from the first call).
    auto list = std::make_shared<Var>();
    list->kind = Var::Kind::List;
    list->type = node->input(0)->type()->expect<c10::ListType>()->getElementType();
    for (const auto& e : in(0)->value.toListRef()) list->items.push_back(Var::constant(e));
    list->items.push_back(in(1));
    list->value = value_of(list);
    env(state, node->input(0)) = list;
    env(state, node->output()) = list;
    return true;
  }
  if (kind == aten::append && node->inputs().size() == 2 && in(0)->kind == Var::Kind::List) {
    auto copy = std::make_shared<Var>(*in(0));
    copy->items.push_back(in(1));
    copy->value = value_of(copy);
    env(state, node->input(0)) = copy;
    env(state, node->output()) = copy;
    return true;
  }
  return false;
}

// Shape queries on tensors: answered from the size expressions, never from the data.
bool Tracer::handle_meta(MachineState& state, const Node* node, const std::vector<VarPtr>& in) {
  if (in.empty() || !is_tensor_var(in[0])) return false;
  const Var& t = *in[0];
  auto kind = node->kind();
  auto size_expr = [&](int64_t d) -> SymExprPtr {
    int64_t rank = static_cast<int64_t>(t.sizes.size());
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return nullptr;
    return t.sizes[static_cast<size_t>(d)];
  };
  auto no_rule = [&]() {
    // End the graph before the size read: the resume frame gets the tensor as an input and
    // reads its size there.
    build_break_exit(state, node, BreakCause::DynamicShapeNoRule,
                     fmt::format("{} reads a dynamic size that tcprof cannot express",
                                 kind.toQualString()),
                     /*resume_at_node=*/true);
    broke_ = true;
    return true;
  };
  if (kind == aten::size && in.size() == 1) {
    auto list = std::make_shared<Var>();
    list->kind = Var::Kind::List;
    list->type = c10::IntType::get();
    for (int64_t d = 0; d < static_cast<int64_t>(t.sizes.size()); ++d) {
      SymExprPtr e = size_expr(d);
      if (!e) return no_rule();
      list->items.push_back(Var::scalar(c10::IValue(t.value.toTensor().size(d)), e));
    }
    list->value = value_of(list);
    env(state, node->output()) = list;
    return true;
  }
  if (kind == aten::size && in.size() == 2 && in[1]->value.isInt()) {
    specialize(in[1], node);
    int64_t d = in[1]->value.toInt();
    SymExprPtr e = size_expr(d);
    if (!e) return no_rule();
    env(state, node->output()) = Var::scalar(c10::IValue(t.value.toTensor().size(d)), e);
    return true;
  }
  if (kind == aten::dim) {
    int64_t rank = t.value.toTensor().dim();
    env(state, node->output()) = Var::scalar(c10::IValue(rank), SymExpr::constant(rank));
    return true;
  }
  if (kind == c10::Symbol::fromQualString("aten::numel")) {
    SymExprPtr n = SymExpr::constant(1);
    for (const auto& d : t.sizes) {
      if (!d) return no_rule();
      n = SymExpr::binary(SymOp::Mul, n, d);
    }
    env(state, node->output()) = Var::scalar(c10::IValue(t.value.toTensor().numel()), n);
    return true;
  }
  if (kind == prim::dtype || kind == prim::device || kind == prim::layout || kind == prim::is_cuda ||
      kind == c10::Symbol::fromQualString("prim::is_nested") ||
      kind == aten::is_floating_point || kind == prim::requires_grad || kind == aten::is_complex) {
    run_concretely(state, node, in);
    auto& out = env(state, node->output());
    out = Var::scalar(out->value, nullptr);  // pinned by the dtype/device guards
    return true;
  }
  return false;
}

namespace {

std::optional<SymOp> scalar_op(c10::Symbol kind) {
  if (kind == aten::add) return SymOp::Add;
  if (kind == aten::sub) return SymOp::Sub;
  if (kind == aten::mul) return SymOp::Mul;
  if (kind == aten::floordiv) return SymOp::FloorDiv;
  if (kind == aten::remainder) return SymOp::Mod;
  if (kind == prim::min) return SymOp::Min;
  if (kind == prim::max) return SymOp::Max;
  if (kind == aten::eq) return SymOp::Eq;
  if (kind == aten::ne) return SymOp::Ne;
  if (kind == aten::lt) return SymOp::Lt;
  if (kind == aten::le) return SymOp::Le;
  if (kind == aten::gt) return SymOp::Gt;
  if (kind == aten::ge) return SymOp::Ge;
  if (kind == aten::__and__) return SymOp::And;
  if (kind == aten::__or__) return SymOp::Or;
  return std::nullopt;
}

SymExprPtr as_int_expr(const VarPtr& v) {
  if (v->kind == Var::Kind::Scalar && v->expr) return v->expr;
  if (v->kind == Var::Kind::Constant && v->value.isInt()) return SymExpr::constant(v->value.toInt());
  if (v->kind == Var::Kind::Constant && v->value.isBool()) return SymExpr::constant(v->value.toBool());
  return nullptr;
}

}  // namespace

// Integer arithmetic and comparisons on shape-derived values keep their expression, so a
// decision on them becomes a readable guard (`x.size(0) > 4`) and a dynamic size flows on.
bool Tracer::handle_scalar_op(MachineState& state, const Node* node, const std::vector<VarPtr>& in) {
  bool any_scalar = false;
  for (const auto& v : in) {
    if (v->kind == Var::Kind::Scalar) any_scalar = true;
    else if (v->kind != Var::Kind::Constant) return false;
  }
  if (!any_scalar || node->outputs().size() != 1) return false;
  auto kind = node->kind();
  std::optional<SymOp> op = scalar_op(kind);
  std::vector<SymExprPtr> exprs;
  for (const auto& v : in) exprs.push_back(as_int_expr(v));
  bool all_int = in.size() == 2 && exprs[0] && exprs[1] && !in[0]->value.isDouble() && !in[1]->value.isDouble();
  SymExprPtr result_expr;
  if (op && all_int) {
    result_expr = SymExpr::binary(*op, exprs[0], exprs[1]);
  } else if (kind == aten::__not__ && in.size() == 1 && exprs[0]) {
    result_expr = SymExpr::negate(exprs[0]);
  } else if (kind == aten::neg && in.size() == 1 && exprs[0] && in[0]->value.isInt()) {
    result_expr = SymExpr::binary(SymOp::Sub, SymExpr::constant(0), exprs[0]);
  } else if (kind == aten::Bool && in.size() == 1 && exprs[0] && in[0]->value.isInt()) {
    result_expr = SymExpr::binary(SymOp::Ne, exprs[0], SymExpr::constant(0));
  } else if (kind == aten::Int && in.size() == 1 && exprs[0] && in[0]->value.isInt()) {
    result_expr = exprs[0];
  } else {
    // Anything else (float math on sizes, string formatting...) is specialised: the inputs are
    // pinned by guards and the result is a plain value for this entry.
    for (const auto& v : in) specialize(v, node);
  }
  run_concretely(state, node, in);
  auto& out = env(state, node->output());
  out = Var::scalar(out->value, result_expr);
  return true;
}

void Tracer::run_concretely(MachineState& state, const Node* node, const std::vector<VarPtr>& in) {
  torch::jit::Stack stack;
  for (const auto& v : in) stack.push_back(value_of(v));
  try {
    run_node(node, stack);
  } catch (const c10::Error& e) {
    SourceLoc loc = locate(node);
    throw Error(ErrorKind::Input, fmt::format("{} at {}:{} failed: {}", node->kind().toQualString(),
                                              loc.file, loc.line, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    SourceLoc loc = locate(node);
    throw Error(ErrorKind::Input, fmt::format("{} at {}:{} failed: {}", node->kind().toQualString(),
                                              loc.file, loc.line, e.what()));
  }
  for (size_t i = 0; i < node->outputs().size(); ++i) {
    env(state, node->outputs()[i]) = Var::constant(stack[i]);
  }
}

void Tracer::emit_graph_op(MachineState& state, const Node* node, const std::vector<VarPtr>& in) {
  GraphOp op;
  op.node = node;
  op.name = node->kind().toQualString();
  op.module_path = state.activations[static_cast<size_t>(activation_)].module_path;
  op.loc = locate(node);
  torch::jit::Stack stack;
  for (const auto& v : in) {
    op.args.push_back(to_arg(v));
    stack.push_back(value_of(v));
  }
  try {
    run_node(node, stack);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Input,
                fmt::format("{} at {}:{} failed on these inputs: {}", op.name, op.loc.file, op.loc.line,
                            e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Input,
                fmt::format("{} at {}:{} failed on these inputs: {}", op.name, op.loc.file, op.loc.line, e.what()));
  }
  std::vector<c10::IValue> frame_inputs(slot_values_.begin(), slot_values_.begin() + static_cast<long>(out_.graph.inputs.size()));
  InputBindings bindings(frame_inputs);
  for (size_t i = 0; i < node->outputs().size(); ++i) {
    auto var = std::make_shared<Var>();
    var->value = stack[i];
    var->slot = out_.graph.num_slots++;
    slot_values_.push_back(stack[i]);
    if (stack[i].isTensor()) {
      var->kind = Var::Kind::Tensor;
      var->sizes = output_sizes(node, in, stack[i].toTensor(), bindings);
    } else {
      var->kind = Var::Kind::GraphValue;
    }
    op.outputs.push_back(var->slot);
    env(state, node->outputs()[i]) = var;
  }
  out_.graph.ops.push_back(std::move(op));
}

Tracer::Step Tracer::step(MachineState& state, const Node* node) {
  auto kind = node->kind();
  broke_ = false;
  if (kind == prim::Constant) {
    // Function constants (the callee of prim::CallFunction) have no IValue; calls use the type.
    auto value = torch::jit::toIValue(node->output());
    env(state, node->output()) = Var::constant(value ? *value : c10::IValue());
    return Step::Continue;
  }
  if (kind == prim::If) {
    enter_if(state, node);
    return Step::Continue;
  }
  if (kind == prim::Loop) {
    enter_loop(state, node);
    return Step::Continue;
  }
  if (kind == prim::CallMethod || kind == prim::CallFunction) {
    bool module_call = kind == prim::CallFunction || node->input(0)->type()->expect<c10::ClassType>()->is_module();
    if (module_call && (kind == prim::CallFunction || lookup(state, node->input(0))->is_constant())) {
      enter_call(state, node);
      return Step::Continue;
    }
  }
  if (kind == prim::GetAttr) {
    VarPtr obj = lookup(state, node->input(0));
    if (obj->is_constant() && obj->value.isObject()) {
      const std::string& name = node->s(c10::attr::name);
      auto object = obj->value.toObject();
      c10::IValue v = object->getAttr(name);
      std::string path = obj->module_path.empty() ? name : obj->module_path + "." + name;
      if (v.isObject() || v.isTensor() || v.isNone() || v.isString() || eager_) {
        if (v.isTensor() && !eager_) guard_param_requires_grad(object, name, v.toTensor(), path, node);
        env(state, node->output()) = Var::constant(v, path);
      } else {
        // A module flag such as `training`: guarded, and handed on as a value (not baked into
        // resume frames) because it may change between calls.
        Guard g;
        g.kind = GuardKind::Attribute;
        g.object = object;
        g.attr_slot = object->type()->getAttributeSlot(name);
        g.attr_value = v;
        g.text = fmt::format("self.{} == {}", path,
                             v.isBool() ? (v.toBool() ? "True" : "False") : c10::str(v));
        g.loc = locate(node);
        // Attribute reads carry no source range; the line that uses the value explains the guard.
        for (size_t u = 0; u < node->output()->uses().size() && !g.loc.known(); ++u) {
          g.loc = locate(node->output()->uses()[u].user);
        }
        bool seen = false;
        for (const auto& existing : out_.guards.guards()) {
          seen = seen || (existing.kind == GuardKind::Attribute && existing.text == g.text);
        }
        if (!seen) out_.guards.add(std::move(g));
        env(state, node->output()) = Var::scalar(v, nullptr);
      }
      return Step::Continue;
    }
  }
  std::vector<VarPtr> in;
  for (const Value* v : node->inputs()) in.push_back(lookup(state, v));
  if (kind == prim::SetAttr && eager_) {
    value_of(in[0]).toObject()->setAttr(node->s(c10::attr::name), value_of(in[1]));
    return Step::Continue;
  }
  if (handle_structural(state, node)) return Step::Continue;
  if (eager_ && kind == aten::warn) {
    SourceLoc loc = locate(node);
    fmt::print(stderr, "{}:{}: UserWarning: {}\n", loc.file, loc.line, value_of(in[0]).toStringRef());
    return Step::Continue;
  }
  if (eager_) {
    run_concretely(state, node, in);
    return Step::Continue;
  }
  if (auto cause = classify_break(node, in)) {
    build_break_exit(state, node, cause->first, cause->second);
    return Step::Break;
  }
  if (handle_meta(state, node, in)) return broke_ ? Step::Break : Step::Continue;
  bool all_constant = true, has_tensor_output = false, reads_graph = false;
  for (const auto& v : in) {
    all_constant = all_constant && v->is_constant();
    reads_graph = reads_graph || v->kind == Var::Kind::Tensor || v->kind == Var::Kind::GraphValue;
  }
  for (const Value* o : node->outputs()) {
    auto k = o->type()->kind();
    has_tensor_output = has_tensor_output || k == c10::TypeKind::TensorType ||
                        (k == c10::TypeKind::ListType &&
                         o->type()->expect<c10::ListType>()->getElementType()->kind() == c10::TypeKind::TensorType);
  }
  if (all_constant && !has_tensor_output) {
    run_concretely(state, node, in);
    return Step::Continue;
  }
  if (!reads_graph && !has_tensor_output && handle_scalar_op(state, node, in)) return Step::Continue;
  if (!reads_graph && !has_tensor_output && std::all_of(in.begin(), in.end(), [](const VarPtr& v) { return v->is_static(); })) {
    // Strings and lists computed from pinned values (an f-string of a shape): a value of this
    // entry, not of every call, so it is handed on as an input and never baked into later frames.
    for (const auto& v : in) specialize(v, node);
    run_concretely(state, node, in);
    for (const Value* o : node->outputs()) {
      auto& out = env(state, o);
      out = Var::scalar(out->value, nullptr);
    }
    return Step::Continue;
  }
  if (!has_tensor_output && reads_graph) {
    // A number computed from tensor data (beyond the cases above) ends the graph.
    build_break_exit(state, node, BreakCause::TensorToScalar,
                     fmt::format("{} turns tensor data into a {}", kind.toQualString(),
                                 node->output(0)->type()->str()));
    return Step::Break;
  }
  emit_graph_op(state, node, in);
  return Step::Continue;
}

}  // namespace tcprof
