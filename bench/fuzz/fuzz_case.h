// One differential-test case: a TorchScript module (source text, parameters, buffers) and recipes
// for its inputs. Every tensor is a pure function of its recipe, so a case can be rebuilt exactly:
// twice per call (one copy for eager, one for the compiled module, so that an input mutated by
// one of them shows) and again when a failure is reproduced from its seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "compiler/runtime/output_check.h"

namespace tcprof::fuzz {

// How an input is laid out in memory; the model sees the same sizes and values either way.
enum class Layout {
  Contiguous,
  Transposed,  // the transpose of a contiguous tensor: dims `dim` and the last swapped in memory
  Strided,     // every other element along `dim` (a step-2 slice of a tensor twice as long)
  Offset,      // starts at element 1 along `dim`: a storage offset (and a gap when dim > 0)
  Broadcast,   // stride 0 along `dim`: a size-1 tensor expanded
};
const char* layout_name(Layout layout);

struct TensorRecipe {
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::vector<int64_t> sizes;
  Layout layout = Layout::Contiguous;
  int dim = 0;                    // the dimension `layout` is about
  std::vector<int> dynamic_dims;  // dims that take the case's dynamic size on later calls
  double scale = 1;               // floats: normal * scale; ints: uniform in [-scale, scale]
  double min_abs = -1;            // >= 0: floats are |normal * scale| + min_abs (variances)
  bool specials = false;          // floats: some elements NaN, +-inf, +-0 and rounding ties
  uint64_t seed = 0;
};

// The tensor a recipe describes. `dynamic_size` >= 0 replaces the sizes of `dynamic_dims`;
// `salt` gives other values with the same layout (each call of a case uses its own).
at::Tensor make_tensor(const TensorRecipe& recipe, int64_t dynamic_size = -1, uint64_t salt = 0);

// "f32[2,3] strides [1,2] offset 0 (transposed dim 0)"
std::string describe_tensor(const at::Tensor& t);
std::string describe_recipe(const TensorRecipe& recipe);

// Dependence (what a value is computed through): compiler/runtime/output_check.h.

struct ParamSpec {
  std::string name;  // attribute name: the source reads self.<name>
  TensorRecipe recipe;
  bool buffer = false;  // register_buffer instead of register_parameter
};

struct FuzzCase {
  uint64_t seed = 0;       // the generator seed (fuzz_graphs --case SEED rebuilds it)
  std::string name;        // targeted cases: what they test
  std::string source;      // the module's methods, TorchScript
  std::vector<ParamSpec> params;
  std::vector<TensorRecipe> inputs;
  // Calls after the first two (which use the recipes' sizes): the dynamic dims take these sizes.
  std::vector<int64_t> dynamic_sizes;
  // true: the dynamic dims are CompileOptions::dynamic from the start; false: automatic dynamic
  // shapes (the first size change recompiles with the dim symbolic, later sizes reuse it).
  bool declare_dynamic = true;
  std::vector<std::string> ops;  // the generator's ops, in order (for coverage counts)
  // Per returned value: what it is computed through, which sets the f64 oracle's tolerance
  // (differential_check.h). Empty: unknown, counts as Normalization (the loosest).
  std::vector<Dependence> output_dependence;
  bool known_bug_patterns = true;  // generated with GeneratorOptions::known_bug_patterns
};

// Source, parameters and inputs as text: enough to rebuild the case by hand. `with_layouts` adds
// each input's strides and offset, which makes its tensors (LibTorch work a process that forks
// for isolation must not do).
std::string describe_case(const FuzzCase& c, bool with_layouts = true);

}  // namespace tcprof::fuzz
