#include "compiler/frontend/guards.h"

#include <ATen/core/grad_mode.h>
#include <ATen/core/Tensor.h>
#include <fmt/format.h>

namespace tcprof {

std::string_view guard_kind_name(GuardKind kind) {
  switch (kind) {
    case GuardKind::Dtype: return "dtype";
    case GuardKind::Device: return "device";
    case GuardKind::Rank: return "rank";
    case GuardKind::Size: return "size";
    case GuardKind::DynamicSize: return "dynamic_size";
    case GuardKind::Contiguous: return "stride";
    case GuardKind::RequiresGrad: return "requires_grad";
    case GuardKind::IntValue: return "int";
    case GuardKind::FloatValue: return "float";
    case GuardKind::BoolValue: return "bool";
    case GuardKind::ShapeExpr: return "shape_expr";
    case GuardKind::Attribute: return "attribute";
    case GuardKind::GradMode: return "grad_mode";
    case GuardKind::SameTensor: return "aliasing";
    case GuardKind::ParamRequiresGrad: return "requires_grad";
  }
  return "?";
}

int64_t InputBindings::input_dim(int input, int dim) const {
  return inputs_[static_cast<size_t>(input)].toTensor().size(dim);
}

int64_t InputBindings::input_int(int input) const {
  return inputs_[static_cast<size_t>(input)].toInt();
}

void GuardSet::add(Guard guard) {
  if (guard.expr) guard.program = SymProgram(*guard.expr);
  guards_.push_back(std::move(guard));
}

void GuardSet::set_input_locations(const std::vector<SourceLoc>& locs) {
  for (auto& g : guards_) {
    if (g.input >= 0 && static_cast<size_t>(g.input) < locs.size() && !g.loc.known()) g.loc = locs[static_cast<size_t>(g.input)];
  }
}

bool GuardSet::holds(const Guard& g, const std::vector<c10::IValue>& inputs) const {
  const c10::IValue* in = g.input >= 0 ? &inputs[static_cast<size_t>(g.input)] : nullptr;
  switch (g.kind) {
    case GuardKind::Dtype:
      return in->isTensor() && static_cast<int64_t>(in->toTensor().scalar_type()) == g.expected;
    case GuardKind::Device:
      return static_cast<int64_t>(in->toTensor().device().type()) == g.expected;
    case GuardKind::Rank: return in->toTensor().dim() == g.expected;
    case GuardKind::Size: return in->toTensor().sizes()[static_cast<size_t>(g.dim)] == g.expected;
    case GuardKind::DynamicSize:  // 0 and 1 are specialised, as in Dynamo
      return in->toTensor().sizes()[static_cast<size_t>(g.dim)] >= 2;
    case GuardKind::Contiguous: return in->toTensor().is_contiguous() == (g.expected != 0);
    case GuardKind::RequiresGrad: return in->toTensor().requires_grad() == (g.expected != 0);
    case GuardKind::IntValue: return in->isInt() && in->toInt() == g.expected;
    case GuardKind::FloatValue: return in->isDouble() && in->toDouble() == g.expected_float;
    case GuardKind::BoolValue: return in->isBool() && in->toBool() == (g.expected != 0);
    case GuardKind::ShapeExpr:
      return g.implied || g.program.run(InputBindings(inputs)) == g.expected;
    case GuardKind::Attribute: {
      const c10::IValue& now = g.object->getSlot(g.attr_slot);
      if (now.isBool() && g.attr_value.isBool()) return now.toBool() == g.attr_value.toBool();
      if (now.isInt() && g.attr_value.isInt()) return now.toInt() == g.attr_value.toInt();
      if (now.isDouble() && g.attr_value.isDouble()) return now.toDouble() == g.attr_value.toDouble();
      return now.isSameIdentity(g.attr_value);
    }
    case GuardKind::GradMode: return at::GradMode::is_enabled() == (g.expected != 0);
    case GuardKind::ParamRequiresGrad: {
      const c10::IValue& now = g.object->getSlot(g.attr_slot);
      return now.isTensor() && now.toTensor().requires_grad() == (g.expected != 0);
    }
    case GuardKind::SameTensor:
      return in->toTensor().is_same(inputs[static_cast<size_t>(g.dim)].toTensor()) == (g.expected != 0);
  }
  return false;
}

bool GuardSet::check(const std::vector<c10::IValue>& inputs) const {
  for (const Guard& g : guards_) {
    if (!holds(g, inputs)) return false;
  }
  return true;
}

namespace {

std::string ivalue_text(const c10::IValue& v) {
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return fmt::format("{}", v.toDouble());
  if (v.isNone()) return "None";
  if (v.isString()) return v.toStringRef();
  return v.tagKind();
}

}  // namespace

std::vector<size_t> GuardSet::failing(const std::vector<c10::IValue>& inputs) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < guards_.size(); ++i) {
    const Guard& g = guards_[i];
    if (holds(g, inputs)) continue;
    out.push_back(i);
    // Past a wrong dtype, device or rank the later guards of the set may read sizes that do not exist.
    if (g.kind == GuardKind::Dtype || g.kind == GuardKind::Device || g.kind == GuardKind::Rank) break;
  }
  return out;
}

GuardFailure GuardSet::explain_failure(const std::vector<c10::IValue>& inputs,
                                       const std::vector<std::string>& names) const {
  GuardFailure f;
  for (size_t i = 0; i < guards_.size(); ++i) {
    const Guard& g = guards_[i];
    if (holds(g, inputs)) continue;
    f.guard_index = i;
    std::string name = g.input >= 0 && static_cast<size_t>(g.input) < names.size()
                           ? names[static_cast<size_t>(g.input)]
                           : std::string("?");
    const c10::IValue* in = g.input >= 0 ? &inputs[static_cast<size_t>(g.input)] : nullptr;
    switch (g.kind) {
      case GuardKind::Dtype:
        f.expected = c10::toString(static_cast<c10::ScalarType>(g.expected));
        f.actual = in->isTensor() ? c10::toString(in->toTensor().scalar_type()) : in->tagKind();
        f.message = fmt::format("tensor '{}' dtype mismatch: expected {}, actual {}", name, f.expected, f.actual);
        break;
      case GuardKind::Device:
        f.expected = c10::DeviceTypeName(static_cast<c10::DeviceType>(g.expected), true);
        f.actual = c10::DeviceTypeName(in->toTensor().device().type(), true);
        f.message = fmt::format("tensor '{}' device mismatch: expected {}, actual {}", name, f.expected, f.actual);
        break;
      case GuardKind::Rank:
        f.expected = std::to_string(g.expected);
        f.actual = std::to_string(in->toTensor().dim());
        f.message = fmt::format("tensor '{}' rank mismatch: expected {}, actual {}", name, f.expected, f.actual);
        break;
      case GuardKind::Size:
        f.expected = std::to_string(g.expected);
        f.actual = std::to_string(in->toTensor().sizes()[static_cast<size_t>(g.dim)]);
        f.message = fmt::format("tensor '{}' size mismatch at index {}: expected {}, actual {}",
                                name, g.dim, f.expected, f.actual);
        break;
      case GuardKind::DynamicSize:
        f.expected = ">= 2";
        f.actual = std::to_string(in->toTensor().sizes()[static_cast<size_t>(g.dim)]);
        f.message = fmt::format("tensor '{}' dynamic dimension {} is {}: sizes 0 and 1 are "
                                "specialised", name, g.dim, f.actual);
        break;
      case GuardKind::Contiguous:
        f.expected = g.expected ? "contiguous" : "non-contiguous";
        f.actual = g.expected ? "non-contiguous" : "contiguous";
        f.message = fmt::format("tensor '{}' stride mismatch: expected {}, actual {}", name, f.expected, f.actual);
        break;
      case GuardKind::RequiresGrad:
        f.expected = g.expected ? "True" : "False";
        f.actual = g.expected ? "False" : "True";
        f.message = fmt::format("tensor '{}' requires_grad mismatch: expected {}, actual {}", name, f.expected, f.actual);
        break;
      case GuardKind::IntValue:
      case GuardKind::FloatValue:
      case GuardKind::BoolValue:
        f.expected = g.kind == GuardKind::FloatValue ? fmt::format("{}", g.expected_float)
                     : g.kind == GuardKind::BoolValue ? (g.expected ? "True" : "False")
                                                      : std::to_string(g.expected);
        f.actual = ivalue_text(*in);
        f.message = fmt::format("'{}' value mismatch: expected {}, actual {}", name, f.expected, f.actual);
        break;
      case GuardKind::ShapeExpr: {
        int64_t now = g.program.run(InputBindings(inputs));
        f.expected = g.expected ? "True" : "False";
        f.actual = now ? "True" : "False";
        f.message = fmt::format("shape guard '{}' is {}, was {} when compiled", g.text, f.actual, f.expected);
        break;
      }
      case GuardKind::Attribute:
        f.expected = ivalue_text(g.attr_value);
        f.actual = ivalue_text(g.object->getSlot(g.attr_slot));
        f.message = fmt::format("attribute {} changed: expected {}, actual {}", g.text.substr(0, g.text.find(" ==")),
                                f.expected, f.actual);
        break;
      case GuardKind::SameTensor:
        f.expected = g.expected ? "same tensor" : "different tensors";
        f.actual = g.expected ? "different tensors" : "same tensor";
        f.message = fmt::format("aliasing changed: {}: expected {}, actual {}", g.text, f.expected, f.actual);
        break;
      case GuardKind::ParamRequiresGrad:
        f.expected = g.expected ? "True" : "False";
        f.actual = g.expected ? "False" : "True";
        f.message = fmt::format("parameter '{}' requires_grad changed: expected {}, actual {}",
                                g.text.substr(0, g.text.find(".requires_grad")), f.expected, f.actual);
        break;
      case GuardKind::GradMode:
        f.expected = g.expected ? "enabled" : "disabled";
        f.actual = g.expected ? "disabled" : "enabled";
        f.message = fmt::format("grad mode changed: expected {}, actual {}", f.expected, f.actual);
        break;
    }
    return f;
  }
  f.message = "all guards hold";
  return f;
}

}  // namespace tcprof
