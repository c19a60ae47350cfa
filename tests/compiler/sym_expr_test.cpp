#include <gtest/gtest.h>

#include "compiler/ir/sym_expr.h"

namespace tcprof {
namespace {

struct FakeBindings : SymBindings {
  std::vector<std::vector<int64_t>> sizes;
  std::vector<int64_t> ints;
  int64_t input_dim(int i, int d) const override { return sizes[static_cast<size_t>(i)][static_cast<size_t>(d)]; }
  int64_t input_int(int i) const override { return ints[static_cast<size_t>(i)]; }
};

TEST(SymExpr, EvaluatesAndPrintsLikePython) {
  auto s0 = SymExpr::input_dim(0, 1, true);
  auto e = SymExpr::binary(SymOp::Gt, SymExpr::binary(SymOp::Mul, s0, SymExpr::constant(2)), SymExpr::constant(4));
  FakeBindings b;
  b.sizes = {{3, 5}};
  EXPECT_EQ(evaluate(*e, b), 1);
  EXPECT_EQ(to_string(*e, {"x"}), "x.size(1) * 2 > 4");
  EXPECT_TRUE(e->dynamic);
  b.sizes = {{3, 2}};
  EXPECT_EQ(SymProgram(*e).run(b), 0);
}

TEST(SymExpr, FloorDivisionAndModuloFollowPython) {
  FakeBindings b;
  b.ints = {-7};
  auto n = SymExpr::input_int(0, true);
  EXPECT_EQ(evaluate(*SymExpr::binary(SymOp::FloorDiv, n, SymExpr::constant(2)), b), -4);
  EXPECT_EQ(evaluate(*SymExpr::binary(SymOp::Mod, n, SymExpr::constant(3)), b), 2);
  EXPECT_THROW(evaluate(*SymExpr::binary(SymOp::FloorDiv, n, SymExpr::constant(0)), b), std::domain_error);
}

// A size with no rule is null; an expression over it is too (cat of x and x[:, :8] with a dynamic
// length built Add(T, null), and evaluating it crashed the recompile).
TEST(SymExpr, AnExpressionOverAnUnknownSizeIsUnknown) {
  SymExprPtr t = SymExpr::input_dim(0, 1, true);
  EXPECT_EQ(SymExpr::binary(SymOp::Add, t, nullptr), nullptr);
  EXPECT_EQ(SymExpr::binary(SymOp::Min, nullptr, t), nullptr);
  EXPECT_EQ(SymExpr::negate(nullptr), nullptr);
}

TEST(SymExpr, ConstantsFoldAndParenthesise) {
  auto c = SymExpr::binary(SymOp::Add, SymExpr::constant(2), SymExpr::constant(3));
  EXPECT_EQ(c->op, SymOp::Const);
  EXPECT_EQ(c->value, 5);
  auto x = SymExpr::input_dim(0, 0, false);
  auto e = SymExpr::binary(SymOp::Mul, SymExpr::binary(SymOp::Add, x, SymExpr::constant(1)), SymExpr::constant(3));
  EXPECT_EQ(to_string(*e, {"x"}), "(x.size(0) + 1) * 3");
  EXPECT_FALSE(e->dynamic);
  EXPECT_EQ(to_string(*SymExpr::negate(SymExpr::binary(SymOp::Lt, x, SymExpr::constant(2))), {"x"}),
            "not x.size(0) < 2");
}

TEST(SymExpr, ProgramMatchesTreeEvaluation) {
  FakeBindings b;
  b.sizes = {{4, 9, 16}};
  b.ints = {0, 3};
  auto e = SymExpr::binary(
      SymOp::Add,
      SymExpr::binary(SymOp::Min, SymExpr::input_dim(0, 2, true), SymExpr::constant(10)),
      SymExpr::binary(SymOp::Mod, SymExpr::input_dim(0, 1, false), SymExpr::input_int(1, true)));
  EXPECT_EQ(SymProgram(*e).run(b), evaluate(*e, b));
  EXPECT_EQ(evaluate(*e, b), 10);
}

}  // namespace
}  // namespace tcprof
