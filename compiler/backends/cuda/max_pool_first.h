// A max pool before the pointwise ops it follows: max_pool2d(relu(conv(x) + b)) becomes
// relu(max_pool2d(conv(x)) + b). A ReLU and the add of a per-channel constant are non-decreasing
// in their input, and each window's maximum is taken over one channel, so applying them before or
// after the maximum gives the same value (rounding is non-decreasing too; a zero's sign may differ,
// and in bf16 and f16 the moved ops may fuse with later ones and round once instead of twice). After the
// pool they run on the pooled values only: ResNet18's stem at batch 32 pools 103 MB into 26 MB,
// and its bias + ReLU kernel read and wrote the 103 MB (109 us on an H200, ~7% of the call).
#pragma once
#include <string>
#include <vector>

namespace tcprof {

struct PassContext;

// Moves each aten::max_pool2d of a floating tensor in front of the chain of ops that alone feed it:
// aten::relu, and aten::add / aten::sub (alpha 1) of a finite constant (a number, or a tensor of
// the value's dtype that is the same at every position of a window: size 1 in the pooled dims,
// not broadcasting the others). Each op of the chain must be its predecessor's only reader; a graph
// that writes anything in place is left as it is. Returns one line per pool moved, for the IR's
// header; the examples of the changed slots are stale afterwards (the caller runs the graph again).
std::vector<std::string> max_pool_first(PassContext& ctx);

}  // namespace tcprof
