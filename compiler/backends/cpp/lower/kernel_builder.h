// Builds a kernel's expression DAG. Nodes are hash-consed, so an expression lowered twice (a
// shared subexpression, `x - mean` in both variance and output of a layer norm) exists once: CSE
// inside kernels comes for free.
#pragma once
#include <map>
#include <tuple>
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

class KernelBuilder {
 public:
  explicit KernelBuilder(Kernel& kernel) : k_(kernel) {}

  int load(int input, ElemType type);
  int constant(double value, ElemType type);
  int row_len(ElemType type);
  int cast(int a, ElemType type);  // a itself when already of that type
  int unary(ExprOp op, ElemType type, int a);
  int binary(ExprOp op, ElemType type, int a, int b);
  int where(ElemType type, int cond, int a, int b);
  int fma(ElemType type, int a, int b, int c);
  int reduce(ExprOp op, int a);
  ElemType type(int node) const { return k_.nodes[static_cast<size_t>(node)].type; }
  Kernel& kernel() { return k_; }

 private:
  int add(ExprNode node);
  int make(ExprOp op, ElemType type, std::vector<int> args);
  Kernel& k_;
  std::map<std::tuple<int, int, int, double, std::vector<int>>, int> index_;
};

}  // namespace tcprof
