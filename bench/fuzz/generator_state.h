// The generator's model of the forward it is writing: every value's shape (with which dims are
// the dynamic size), dtype, a bound on its magnitude, whether it is computed exactly, and which
// values share memory. The op catalog (graph_generator.cpp) reads this to choose ops that are
// valid in eager and meaningful to compare, and updates it as it emits statements.
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>

#include "bench/fuzz/fuzz_case.h"
#include "bench/fuzz/graph_generator.h"

namespace tcprof::fuzz {

using ST = c10::ScalarType;

constexpr double kFloatCap = 1e4;  // values stay below this (see graph_generator.h)
constexpr double kIntCap = 1e6;    // integer products stay far from int32 overflow
constexpr double kNormalBound = 4.5;  // |randn| over the sizes used here

struct Dim {
  int64_t size = 1;
  int sym = 0;  // 0: static; 1: the case's dynamic size; > 1: derived from it (a flatten)
};
using Shape = std::vector<Dim>;

bool same_dim(const Dim& a, const Dim& b);
bool same_shape(const Shape& a, const Shape& b);
// Broadcast of two shapes; dims broadcast only when certainly equal at every call, or static 1.
std::optional<Shape> broadcast(const Shape& a, const Shape& b);
int64_t numel_estimate(const Shape& s);  // dynamic dims at their largest size

bool is_float(ST t);
bool is_int(ST t);
// A participant of type promotion (ATen's result_type): a tensor with dims, a 0-dim tensor or a
// Python number.
struct Participant {
  ST dtype;
  enum class Kind { Dimensioned, ZeroDim, Number } kind;
};
ST result_type(const std::vector<Participant>& ps);

struct Var {
  std::string name;  // as the source reads it: v3, x0, self.p1
  Shape shape;
  ST dtype = ST::Float;
  double bound = 1;          // estimate of max |value| (finite inputs)
  bool exact = true;         // bit-identical in eager and compiled code: comparisons may read it
  bool contiguous = false;   // certainly contiguous in eager: view() is allowed
  int storage = -1;          // values that share memory (views of one tensor) share this
  bool writable = false;     // an intermediate of this graph: in-place ops may write it
  bool overlapping = false;  // expanded: several elements share memory
  bool compute = false;      // the result of a compute op (preferred as a graph output)
  bool constant = false;     // computed from parameters and numbers only (constant folding)
  Dependence dependence = Dependence::Elementwise;  // computed through a reduction or layer norm
  bool erf_error = false;        // depends on an erf (absolute error near 0 in compiled code)
};

// A value an op reads: a Var or a Python number.
struct Operand {
  std::string text;
  Shape shape;
  ST dtype = ST::Float;
  bool number = false;
  double bound = 0;
  bool exact = true;
  bool contiguous = true;
  int var = -1;
  Participant participant() const;
};
Operand operand_of(const std::vector<Var>& vars, int index);

// What kind of second operand an op accepts.
struct PartnerRequest {
  bool allow_number = true;
  bool allow_bool = false;   // bool tensors too
  bool only_bool = false;    // masks
  bool int_only = false;     // in-place into an integer tensor
  bool require_exact = false;
  bool fit_into = false;     // must broadcast into the subject's shape without growing it
  bool float_number = true;  // a number may be a float (else only ints)
  int exclude_storage = -1;  // values sharing this memory are not partners (in-place targets)
};

class GeneratorState {
 public:
  GeneratorState(uint64_t seed, const GeneratorOptions& options);

  // Random choices.
  int pick(int n);
  bool chance(double p);
  int weighted(const std::vector<int>& weights);
  template <typename T>
  const T& choose(const std::vector<T>& items) { return items[static_cast<size_t>(pick(static_cast<int>(items.size())))]; }

  // New values.
  int new_input(Shape shape, ST dtype);
  int new_param(Shape shape, ST dtype, bool buffer, double min_abs = -1);
  Operand number_for(const Var& subject, const PartnerRequest& rq);
  Operand partner(const Var& subject, const PartnerRequest& rq);
  Shape partner_shape(const Shape& s, bool fit_into);

  // Statements. `emit_compute` makes a new tensor, `emit_view` a view of `of`'s memory;
  // `ambiguous` marks a reshape/contiguous result that may alias or copy. Both return the index.
  int emit_compute(const std::string& expr, Var result, const std::string& label, const std::vector<int>& reads);
  int emit_view(const std::string& expr, Var result, const std::string& label, int of, bool ambiguous = false);
  // An in-place op on `target`'s memory; every value sharing it gets the new bound and exactness.
  // `bind`: the statement also names the result (vN = t.op_()), which returns its index, else -1.
  // `reads`: what the values the op reads besides its target are computed through.
  int emit_mutation(const std::string& expr, int target, double bound, bool exact, const std::string& label, bool bind,
                    Dependence reads = Dependence::Elementwise);
  // Re-emits an earlier statement verbatim (common-subexpression elimination meets mutations).
  bool repeat_statement();

  bool can_write(const Var& v) const;
  std::string fresh_name() { return "v" + std::to_string(next_value_++); }
  std::vector<Var>& vars() { return vars_; }
  FuzzCase& fuzz_case() { return case_; }
  const GeneratorOptions& options() const { return options_; }
  int new_sym() { return next_sym_++; }
  bool specials = false;

  // The finished module source: forward(self, x0, ...), the statements, the return.
  std::string source(const std::vector<int>& outputs) const;

 private:
  struct Statement {
    std::string expr;
    std::string label;
    int result = -1;
    bool view = false;
    std::vector<int> reads;
    std::vector<int> epochs;  // mutation count of each read value's memory when it ran
  };
  int add_var(Var v);
  void add_statement(const std::string& line);
  ST partner_dtype(const Var& subject, const PartnerRequest& rq);
  bool dtype_ok(ST t, const PartnerRequest& rq) const;

  std::mt19937_64 rng_;
  GeneratorOptions options_;
  FuzzCase case_;
  std::vector<Var> vars_;
  std::vector<std::string> lines_;
  std::vector<Statement> statements_;
  std::vector<int> storage_epoch_;       // per storage: in-place writes so far
  std::vector<bool> storage_ambiguous_;  // per storage: read by reshape/contiguous (aliasing unknown)
  std::vector<bool> storage_repeated_;   // per storage: computed twice by identical statements
  int next_value_ = 0, next_param_ = 0, next_sym_ = 2;
};

std::string float_literal(double v);

}  // namespace tcprof::fuzz
