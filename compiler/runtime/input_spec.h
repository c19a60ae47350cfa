// The input spec language of PRODUCT.md: one spec per forward argument.
//   f32[8,3,224,224]   i64[4,128](0,1024)   bool[8]   int:5   float:0.5   bool:true
// plus --vary I:D=LO..HI | I:D=a,b,c and --dynamic I:D. Parsing only; input_generator.h makes
// the tensors.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcprof {

enum class SpecDtype { F32, F64, F16, BF16, I64, I32, I8, U8, Bool };

struct InputSpec {
  enum class Kind { Tensor, Int, Float, Bool };
  Kind kind = Kind::Tensor;
  SpecDtype dtype = SpecDtype::F32;
  std::vector<int64_t> sizes;
  std::optional<std::pair<double, double>> range;  // (LO,HI) for random values
  double scalar = 0;                               // Int/Float/Bool value
  std::string text;                                // as the user wrote it
};

struct VarySpec {
  int input = 0;
  int dim = 0;
  std::vector<int64_t> choices;  // explicit list, or empty with lo..hi
  int64_t lo = 0, hi = 0;
};

struct DimRef {
  int input = 0;
  int dim = 0;
};

// Throw Error(Usage) with a message that shows the accepted forms.
InputSpec parse_input_spec(std::string_view text);
VarySpec parse_vary_spec(std::string_view text);
DimRef parse_dim_ref(std::string_view text);  // "I:D"
std::string_view dtype_name(SpecDtype dtype);
std::string describe(const InputSpec& spec);  // canonical text, e.g. "f32[8,3]"

}  // namespace tcprof
