#include "compiler/backends/cpp/lower/loop_ir.h"

#include <fmt/format.h>

namespace tcprof {

const char* c_type(ElemType t) {
  switch (t) {
    case ElemType::F32: return "float";
    case ElemType::F64: return "double";
    case ElemType::I64: return "int64_t";
    case ElemType::I32: return "int32_t";
    case ElemType::Bool: return "bool";
    case ElemType::BF16:
    case ElemType::F16: return "float";
  }
  return "float";
}

const char* elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::F32: return "f32";
    case ElemType::F64: return "f64";
    case ElemType::I64: return "i64";
    case ElemType::I32: return "i32";
    case ElemType::Bool: return "bool";
    case ElemType::BF16: return "bf16";
    case ElemType::F16: return "f16";
  }
  return "?";
}

bool is_floating(ElemType t) { return t == ElemType::F32 || t == ElemType::F64 || is_16_bit_float(t); }
bool is_16_bit_float(ElemType t) { return t == ElemType::BF16 || t == ElemType::F16; }

std::vector<int> covered_ops(const WindowKernel& k) {
  std::vector<int> ops{k.op};
  if (k.epilogue_op >= 0) ops.push_back(k.epilogue_op);
  ops.insert(ops.end(), k.fused_ops.begin(), k.fused_ops.end());
  return ops;
}

std::vector<int> step_ops(const OnednnConv& c) {
  std::vector<int> ops;
  if (c.scale_op >= 0) ops.push_back(c.scale_op);
  ops.push_back(c.op);
  ops.insert(ops.end(), c.post_ops.begin(), c.post_ops.end());
  if (c.pool_op >= 0) ops.push_back(c.pool_op);
  return ops;
}

const char* channel_op_name(ChainChannelOp::Kind k) {
  switch (k) {
    case ChainChannelOp::Kind::Cat: return "cat";
    case ChainChannelOp::Kind::MaxPool: return "max_pool";
  }
  return "?";
}

const char* value_layout_name(ValueLayout l) {
  switch (l) {
    case ValueLayout::Dense: return "dense";
    case ValueLayout::Blocked: return "blocked";
    case ValueLayout::Both: return "blocked+dense";
  }
  return "?";
}

const char* activation_name(OnednnConv::Activation a) {
  switch (a) {
    case OnednnConv::Activation::None: return "none";
    case OnednnConv::Activation::Relu: return "relu";
    case OnednnConv::Activation::Clip: return "clip";
    case OnednnConv::Activation::Hardswish: return "hardswish";
    case OnednnConv::Activation::Silu: return "silu";
    case OnednnConv::Activation::Sigmoid: return "sigmoid";
    case OnednnConv::Activation::Tanh: return "tanh";
    case OnednnConv::Activation::Gelu: return "gelu";
  }
  return "?";
}

const char* expr_op_name(ExprOp op) {
  static const char* names[] = {"load", "const", "rowlen", "cast", "neg", "abs", "exp", "log", "sqrt",
                                "rsqrt", "tanh", "erf", "norm_cdf", "gelu_grad", "sigmoid", "sin", "cos", "floor", "ceil", "round",
                                "recip", "not", "add", "sub", "mul", "div", "max", "min", "pow", "eq",
                                "ne", "lt", "le", "gt", "ge", "and", "or", "where", "fma", "reduce_sum",
                                "reduce_max", "reduce_min"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(ExprOp::ReduceMin) + 1, "a name for every ExprOp");
  return names[static_cast<int>(op)];
}

bool is_reduction(ExprOp op) { return op == ExprOp::ReduceSum || op == ExprOp::ReduceMax || op == ExprOp::ReduceMin; }

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::Pointwise: return "pointwise";
    case KernelKind::Row: return "row";
    case KernelKind::Column: return "column";
  }
  return "?";
}

std::string to_string(const Kernel& k) {
  std::string s = fmt::format("{} {} rank {}{}{} [{}]\n", k.name, kernel_kind_name(k.kind),
                              k.rank, k.kind != KernelKind::Pointwise ? fmt::format(" row_dims {}", k.row_dims) : "",
                              k.order.empty() ? "" : fmt::format(" order [{}]", fmt::join(k.order, ",")),
                              fmt::join(k.op_names, ", "));
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const auto& in = k.inputs[i];
    static const char* inner[] = {"contiguous", "broadcast", "strided"};
    std::string src = in.slot >= 0 ? fmt::format("%{}", in.slot) : fmt::format("const{}", in.constant);
    s += fmt::format("  in{} = {} {} inner {}\n", i, src, elem_type_name(in.type),
                     inner[static_cast<int>(in.inner)]);
  }
  for (size_t i = 0; i < k.nodes.size(); ++i) {
    const auto& n = k.nodes[i];
    std::string rhs;
    if (n.op == ExprOp::Load) rhs = fmt::format("in{}", n.input);
    else if (n.op == ExprOp::Const) rhs = fmt::format("{}", n.value);
    else {
      rhs = std::string(expr_op_name(n.op)) + "(";
      for (size_t a = 0; a < n.args.size(); ++a) rhs += fmt::format("{}t{}", a ? ", " : "", n.args[a]);
      rhs += ")";
    }
    s += fmt::format("  t{}: {} = {}\n", i, elem_type_name(n.type), rhs);
  }
  for (const auto& o : k.outputs) s += fmt::format("  %{} <- t{}{}\n", o.slot, o.expr, o.per_row ? (k.kind == KernelKind::Column ? " per-column" : " per-row") : "");
  return s;
}

}  // namespace tcprof
