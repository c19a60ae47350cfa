// The structure every backend's code generator walks a kernel by, computed once here: which nodes
// are uniform over a row (constants, broadcast loads, reductions and what only they feed), which
// reduction phase (level) each belongs to, the order nodes are defined in, and the accumulation
// rule of row sums. The cpp and cuda backends print the same structure in their own dialects.
#pragma once
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

struct KernelLevels {
  std::vector<bool> uniform;  // per node: the same value for the whole row (row kernels only)
  std::vector<int> level;     // per node: reduction phase it is computed in (0: before any)
  std::vector<bool> reduction;  // per node: a row reduction
  int max_level = 0;          // number of reduction phases
  std::vector<int> reductions_at(int level) const;  // reduction nodes of one phase, in node order
};

// Pointwise kernels: nothing is uniform, no levels.
KernelLevels kernel_levels(const Kernel& k);

// The nodes `roots` depend on that are not `defined`, in definition (topological) order.
// `stop_at_uniform`: inside a row's element loop, uniform nodes are row-scope values (taken as
// defined by the caller before the loop).
std::vector<int> nodes_needed(const Kernel& k, const KernelLevels& levels, const std::vector<int>& roots,
                              const std::vector<bool>& defined, bool stop_at_uniform);

// Uniform nodes the element subtrees of `roots` read that are not yet defined: defined at row
// scope before an element loop.
std::vector<int> uniform_leaves(const Kernel& k, const KernelLevels& levels, const std::vector<int>& roots,
                                const std::vector<bool>& defined);

// sum(exp(x - max(x))): the denominator of softmax and log_softmax.
bool is_softmax_denominator(const Kernel& k, int sum_node);

// The accumulation rule of f32 row sums, for every row kernel that reduces (lone, fused behind
// elementwise ops, layer norm, mean, log_softmax, backward graphs; every backend): they
// accumulate in double, as exactly as eager's cascade sums, so that a mean of a constant row is
// that constant and a layer norm does not amplify rounding noise by 1/sqrt(eps). The one exception
// is softmax's denominator: its terms exp(x - max) are in (0, 1], one of them 1, so nothing
// cancels and the sum is at least 1; it stays in f32, as LibTorch's does (in double it cost 29%
// of the GPT's attention softmax kernel on the CPU).
bool sum_accumulates_in_double(const Kernel& k, int sum_node);

// Softmax-shaped outputs (e / sum(e), the sum in the last phase): a backend may store e while
// summing and divide in place afterwards instead of computing e twice.
std::vector<bool> outputs_divided_in_place(const Kernel& k, const KernelLevels& levels);

// A row kernel's outputs after its last reduction phase, by how they are written: element outputs
// (their expression roots), per-row outputs, and the sums softmax-shaped outputs are divided by.
struct RowOutputRoots {
  std::vector<int> element, per_row, divisors;
};
RowOutputRoots row_output_roots(const Kernel& k, const std::vector<bool>& divided_in_place);

}  // namespace tcprof
