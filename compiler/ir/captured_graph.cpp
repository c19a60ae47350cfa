#include "compiler/ir/captured_graph.h"

#include <fmt/format.h>

namespace tcprof {
namespace {

std::string arg_text(const Arg& arg, const std::vector<std::string>& names) {
  switch (arg.kind) {
    case Arg::Kind::Slot: return fmt::format("%{}", arg.slot);
    case Arg::Kind::Sym: return fmt::format("<{}>", to_string(*arg.sym, names));
    case Arg::Kind::List: {
      std::string s = arg.element_type ? "[" : "(";
      for (size_t i = 0; i < arg.items.size(); ++i) s += (i ? ", " : "") + arg_text(arg.items[i], names);
      return s + (arg.element_type ? "]" : ")");
    }
    case Arg::Kind::Constant: break;
  }
  const c10::IValue& v = arg.constant;
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    return fmt::format("tensor<{}[{}]>", c10::toString(t.scalar_type()), fmt::join(t.sizes(), ","));
  }
  if (v.isNone()) return "None";
  if (v.isString()) return fmt::format("\"{}\"", v.toStringRef());
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return fmt::format("{}", v.toDouble());
  if (v.isIntList()) return fmt::format("[{}]", fmt::join(v.toIntVector(), ", "));
  return v.tagKind();
}

}  // namespace

std::string CapturedGraph::ir() const {
  std::vector<std::string> names;
  for (const auto& in : inputs) names.push_back(in.name);
  std::string out = "graph(";
  for (size_t i = 0; i < inputs.size(); ++i) out += fmt::format("{}%{} {}", i ? ", " : "", i, inputs[i].name);
  out += "):\n";
  for (const auto& op : ops) {
    std::string outs;
    for (size_t i = 0; i < op.outputs.size(); ++i) outs += fmt::format("{}%{}", i ? ", " : "", op.outputs[i]);
    std::string args;
    for (size_t i = 0; i < op.args.size(); ++i) args += (i ? ", " : "") + arg_text(op.args[i], names);
    std::string where = op.loc.known() ? fmt::format("  # {}:{}", op.loc.file, op.loc.line) : "";
    out += fmt::format("  {} = {}({}){}\n", outs, op.name, args, where);
  }
  out += "  return (";
  for (size_t i = 0; i < outputs.size(); ++i) out += fmt::format("{}%{}", i ? ", " : "", outputs[i]);
  out += ")\n";
  return out;
}

}  // namespace tcprof
