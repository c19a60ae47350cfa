#include <gtest/gtest.h>

#include <set>

#include "compiler/runtime/input_generator.h"
#include "compiler/runtime/input_spec.h"
#include "core/error.h"

namespace tcprof {
namespace {

TEST(InputSpec, ParsesTensorsWithRanges) {
  auto s = parse_input_spec("i64[4,128](0,1024)");
  EXPECT_EQ(s.kind, InputSpec::Kind::Tensor);
  EXPECT_EQ(s.dtype, SpecDtype::I64);
  EXPECT_EQ(s.sizes, (std::vector<int64_t>{4, 128}));
  ASSERT_TRUE(s.range);
  EXPECT_EQ(s.range->second, 1024);
  EXPECT_EQ(parse_input_spec("float32[8, 3]").dtype, SpecDtype::F32);
  EXPECT_EQ(parse_input_spec("bool[8]").dtype, SpecDtype::Bool);
  EXPECT_TRUE(parse_input_spec("f32[]").sizes.empty());
  EXPECT_EQ(describe(parse_input_spec(" f16[2,2] ")), "f16[2,2]");
}

TEST(InputSpec, ParsesScalars) {
  EXPECT_EQ(parse_input_spec("int:5").scalar, 5);
  EXPECT_EQ(parse_input_spec("float:0.5").kind, InputSpec::Kind::Float);
  EXPECT_EQ(parse_input_spec("bool:true").scalar, 1);
}

TEST(InputSpec, RejectsBadSpecsWithTheAcceptedForms) {
  for (const char* bad : {"f33[2]", "f32[2,-1]", "f32[2", "f32[2](5,1)", "int:x", "bool:yes", "f32[a]", "i64[2](0)"}) {
    try {
      parse_input_spec(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("DTYPE[D0,D1,...]"), std::string::npos) << e.what();
    }
  }
}

TEST(VarySpec, RangesAndLists) {
  auto v = parse_vary_spec("0:1=16..256");
  EXPECT_EQ(v.input, 0);
  EXPECT_EQ(v.dim, 1);
  EXPECT_EQ(v.lo, 16);
  EXPECT_EQ(v.hi, 256);
  EXPECT_EQ(parse_vary_spec("1:0=2,4,8").choices, (std::vector<int64_t>{2, 4, 8}));
  EXPECT_THROW(parse_vary_spec("0:1=9..3"), Error);
  EXPECT_THROW(parse_vary_spec("0=1..3"), Error);
}

TEST(InputGenerator, SeededAndVaried) {
  InputGenerator a({parse_input_spec("f32[2,3]"), parse_input_spec("i64[5](0,4)")}, {parse_vary_spec("0:1=3..9")}, 7);
  InputGenerator b({parse_input_spec("f32[2,3]"), parse_input_spec("i64[5](0,4)")}, {parse_vary_spec("0:1=3..9")}, 7);
  auto x = a.make(3), y = b.make(3);
  EXPECT_TRUE(x[0].toTensor().equal(y[0].toTensor()));
  EXPECT_TRUE(x[1].toTensor().equal(y[1].toTensor()));
  EXPECT_LT(x[1].toTensor().max().item<int64_t>(), 4);
  std::set<int64_t> seen;
  for (int i = 0; i < 30; ++i) {
    int64_t d = a.make(i)[0].toTensor().size(1);
    EXPECT_GE(d, 3);
    EXPECT_LE(d, 9);
    seen.insert(d);
  }
  EXPECT_GT(seen.size(), 3u);
  EXPECT_THROW(InputGenerator({parse_input_spec("f32[2]")}, {parse_vary_spec("0:1=1..2")}, 0), Error);
}

// A list is a shape history to replay: in order, cycling, whatever the seed.
TEST(InputGenerator, AVaryListIsTakenInOrderAndCycles) {
  InputGenerator g({parse_input_spec("f32[2,3]")}, {parse_vary_spec("0:0=4,8,12,16,4")}, 11);
  std::vector<int64_t> sizes;
  for (int i = 0; i < 7; ++i) sizes.push_back(g.make(i)[0].toTensor().size(0));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 8, 12, 16, 4, 4, 8}));
}

}  // namespace
}  // namespace tcprof
