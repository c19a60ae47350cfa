#include "compiler/backends/cpp/lower/kernel_builder.h"

namespace tcprof {

int KernelBuilder::add(ExprNode node) {
  auto key = std::make_tuple(static_cast<int>(node.op), static_cast<int>(node.type), node.input, node.value, node.args);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  int id = static_cast<int>(k_.nodes.size());
  k_.nodes.push_back(std::move(node));
  index_.emplace(std::move(key), id);
  return id;
}

int KernelBuilder::load(int input, ElemType type) {
  ExprNode n;
  n.op = ExprOp::Load;
  n.type = type;
  n.input = input;
  return add(std::move(n));
}

int KernelBuilder::constant(double value, ElemType type) {
  ExprNode n;
  n.op = ExprOp::Const;
  n.type = type;
  n.value = value;
  return add(std::move(n));
}

int KernelBuilder::row_len(ElemType type) {
  ExprNode n;
  n.op = ExprOp::RowLen;
  n.type = type;
  return add(std::move(n));
}

int KernelBuilder::cast(int a, ElemType type) {
  if (this->type(a) == type) return a;
  const ExprNode& src = k_.nodes[static_cast<size_t>(a)];
  if (src.op == ExprOp::Const) return constant(src.value, type);
  return make(ExprOp::Cast, type, {a});
}

int KernelBuilder::make(ExprOp op, ElemType type, std::vector<int> args) {
  ExprNode n;
  n.op = op;
  n.type = type;
  n.args = std::move(args);
  return add(std::move(n));
}

int KernelBuilder::unary(ExprOp op, ElemType type, int a) { return make(op, type, {a}); }
int KernelBuilder::binary(ExprOp op, ElemType type, int a, int b) { return make(op, type, {a, b}); }
int KernelBuilder::where(ElemType type, int cond, int a, int b) { return make(ExprOp::Where, type, {cond, a, b}); }
int KernelBuilder::fma(ElemType type, int a, int b, int c) { return make(ExprOp::Fma, type, {a, b, c}); }
int KernelBuilder::reduce(ExprOp op, int a) { return make(op, type(a), {a}); }

}  // namespace tcprof
