// The random graph generator: a module whose forward chains 2-12 ops the cpp backend lowers
// (pointwise math and activations, comparisons and masks, softmax / layer norm / sums / batch
// norm, in-place variants) with views between them (transpose, permute, slices with steps,
// expand, reshape), over inputs that broadcast against each other, with odd layouts, size-1 and
// size-0 dims, a dynamic dim, and f32 / f64 / i32 / i64 / bool values.
//
// Rules that keep a correct backend from failing (each is about the test, not the backend):
//   - values stay within ~1e4 (an op that would exceed it is not chosen), so f32 results are not
//     dominated by overflow or by the conditioning of huge intermediates;
//   - domains are made safe where the op list asks for it: log(|x|+1), sqrt(|x|), pow(|x|, 0.5);
//   - comparisons, masks and rounding read only values that are computed exactly (inputs,
//     integers, neg/abs/relu/clamp/max/where of exact values): a 1-ulp difference in a compared
//     float legitimately flips a bool, which is not a bug;
//   - in-place ops write only intermediates of this graph, never a view whose aliasing differs
//     between eager and compiled code (reshape and contiguous may copy or alias depending on the
//     layout, and compiled kernels return contiguous tensors where eager may not), nor an
//     expanded (overlapping) view;
//   - cases with injected infinities have no layer norm over one-element rows (exactly 0 in the
//     kernels, rounding noise in eager: times an infinity, NaN against +-inf).
#pragma once
#include <cstdint>

#include "bench/fuzz/fuzz_case.h"

namespace tcprof::fuzz {

struct GeneratorOptions {
  int min_ops = 2, max_ops = 12;
  double dynamic_probability = 0.2;     // a dim changes size on later calls
  double zero_size_probability = 0.05;  // one dim of the main shape is 0
  double specials_probability = 0.1;    // float inputs hold NaN, infinities, signed zeros, ties
  double large_probability = 0.05;      // sizes that take the kernels' parallel and tiled paths
  // Generate the patterns of the open backend bugs (tests/fuzz, FuzzBugs.DISABLED_*): in-place
  // writes to values computed from parameters only (constant folding), and to values another
  // view or in-place result aliases (functionalization) and to one of two identical ops (CSE);
  // slices with an end in cases with a dynamic dim (a capture crash); square roots of values
  // computed from an erf (its absolute error near 0); layer norms over rows of more than 4096
  // (summation error). Off: a run that finds only new bugs.
  bool known_bug_patterns = true;
  // Convolutions (the layout pass: oneDNN chains, post-ops, residual adds) over mostly 4-D main
  // inputs. Off by default, so that every earlier seed still generates the same case.
  bool convolutions = false;
  // Self-attention (matmul, scale, constant mask, softmax, matmul: the attention kernel) and
  // linear layers with constant weights (GEMMs against prepared weights), on the same terms.
  bool attention = false;
  // Max pools and channel concatenations of 4-D values (the layout pass's channel ops: SqueezeNet's
  // fire modules), with --conv usually over convolution outputs. Off by default, on the same terms.
  bool pools = false;
  // Cases whose gradients are checked (fuzz_graphs --backward): square roots take |x| + 0.001,
  // not |x|. sqrt's slope at 0 is infinite, so where a value is 0 (or cancels to 0 in one
  // executor's rounding and not in another's) the gradient is inf * 0: NaN in one, a huge finite
  // number in the other, and neither is the derivative of anything. Forward cases keep |x|.
  bool differentiable = false;
};

FuzzCase generate_case(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace tcprof::fuzz
