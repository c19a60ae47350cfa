// The generator's driver: picks the main input (shape, dtype, dynamic or empty dims), then chains
// ops from the catalog (generator_ops.h), each time on a subject that is usually the newest value
// so that long chains fuse, and returns the newest value plus a few earlier ones.
#include "bench/fuzz/graph_generator.h"

#include "bench/fuzz/generator_ops.h"

namespace tcprof::fuzz {
namespace {

enum Op {
  kUnary, kActivation, kPow, kRounding, kArith, kDiv, kRsub, kMaxMin, kCompare, kWhere, kMaskedFill,
  kLogicalNot, kMulMask, kSoftmax, kLayerNorm, kReduce, kBatchNorm, kContiguous, kTranspose, kPermute,
  kUnsqueeze, kSlice, kExpand, kReshape, kInPlace, kInPlaceView, kRepeat, kConv2d, kAttention, kLinear,
  kMaxPool2d, kCatChannels,
};
// kConv2d, kAttention, kLinear, kMaxPool2d and kCatChannels last, weighted 0 unless
// GeneratorOptions::convolutions / ::attention (which brings linear layers too) / ::pools: the
// other draws stay the same.
const std::vector<int> kWeights = {10, 10, 4, 2, 14, 4, 2, 4, 4, 4, 4, 1, 2, 4, 4, 5, 3, 2, 3, 2, 2, 3, 2, 3, 4, 2, 2, 0, 0, 0, 0, 0};
const int kConvWeight = 45, kAttentionWeight = 20, kLinearWeight = 15, kMaxPoolWeight = 15, kCatWeight = 20;

class Generator {
 public:
  Generator(uint64_t seed, const GeneratorOptions& options) : g_(seed, options), weights_(kWeights) {
    if (options.convolutions) weights_[kConv2d] = kConvWeight;
    if (options.attention) weights_[kAttention] = kAttentionWeight, weights_[kLinear] = kLinearWeight;
    if (options.pools) weights_[kMaxPool2d] = kMaxPoolWeight, weights_[kCatChannels] = kCatWeight;
  }

  FuzzCase run() {
    const GeneratorOptions& o = g_.options();
    choose_inputs();
    const size_t ops = static_cast<size_t>(o.min_ops + g_.pick(o.max_ops - o.min_ops + 1));
    for (int attempt = 0; attempt < 400 && g_.fuzz_case().ops.size() < ops; ++attempt) step();
    bool computes = false;
    for (const auto& v : g_.vars()) computes = computes || v.compute;
    if (!computes) op_unary_neg(g_, 0);
    const std::vector<int> outs = outputs();
    g_.fuzz_case().source = g_.source(outs);
    for (int o : outs) g_.fuzz_case().output_dependence.push_back(var(g_, o).dependence);
    return g_.fuzz_case();
  }

 private:
  // The main input: rank 1-4 (sizes that are 1, odd, powers of two), sometimes big enough for
  // the parallel and tiled kernel paths, sometimes with a 0 or a dynamic dim.
  void choose_inputs() {
    const GeneratorOptions& o = g_.options();
    FuzzCase& c = g_.fuzz_case();
    const int rank = (o.convolutions || o.pools) && g_.chance(0.8) ? 4 : 1 + g_.weighted({1, 3, 4, 2});
    std::vector<int64_t> sizes;
    bool large = g_.chance(o.large_probability);
    if (large && g_.chance(0.5)) {
      sizes = {2, 9000 + g_.pick(3000)};  // inner > 8192 with few rows: the tiled loop
    } else if (large) {
      sizes = {4, 16 + g_.pick(32), 256 + g_.pick(256)};  // >= 32768 elements: the OpenMP loop
    } else {
      for (int d = 0; d < rank; ++d) {
        sizes.push_back(d + 1 == rank ? g_.choose<int64_t>({1, 3, 4, 8, 16, 17, 32, 33, 64, 100})
                                      : g_.choose<int64_t>({1, 2, 3, 4, 5, 7, 8, 16}));
      }
    }
    Shape main;
    for (int64_t s : sizes) main.push_back(Dim{s, 0});
    if (!large && g_.chance(o.zero_size_probability)) {
      main[static_cast<size_t>(g_.pick(static_cast<int>(main.size())))].size = 0;
    } else if (g_.chance(o.dynamic_probability)) {
      Dim& d = main[static_cast<size_t>(g_.chance(0.6) ? 0 : g_.pick(static_cast<int>(main.size())))];
      if (d.size < 2) d.size = g_.choose<int64_t>({2, 3, 4, 5});  // 0 and 1 are specialised
      d.sym = 1;
      std::vector<int64_t> pool;
      for (int64_t v : {2, 3, 5, 6, 9, 12}) {
        if (v != d.size) pool.push_back(v);
      }
      int64_t first = g_.choose(pool), second = g_.choose(pool);
      c.dynamic_sizes = {first, second};
      c.declare_dynamic = g_.chance(0.5);
    }
    g_.specials = g_.chance(o.specials_probability);
    const ST dtype = std::vector<ST>{ST::Float, ST::Double, ST::Long, ST::Int}[static_cast<size_t>(g_.weighted({74, 12, 7, 7}))];
    int x0 = g_.new_input(main, dtype);
    if (g_.chance(0.4)) g_.new_input(g_.partner_shape(main, false), g_.chance(0.15) ? ST::Bool : dtype);
    (void)x0;
  }

  int pick_subject() {
    const int n = static_cast<int>(g_.vars().size());
    if (g_.chance(0.05)) {  // a chain that starts at a parameter: constant folding
      Shape s = g_.partner_shape(var(g_, 0).shape, false);
      return g_.new_param(s, is_float(var(g_, 0).dtype) ? var(g_, 0).dtype : ST::Float, g_.chance(0.3));
    }
    if (g_.chance(0.6)) return n - 1;  // long chains fuse
    if (g_.chance(0.6)) {
      std::vector<int> computed;
      for (int i = 0; i < n; ++i) {
        if (var(g_, i).compute) computed.push_back(i);
      }
      if (!computed.empty()) return g_.choose(computed);
    }
    return g_.pick(n);
  }

  void step() {
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (apply(g_.weighted(weights_), pick_subject())) return;
    }
  }

  bool apply(int op, int s) {
    switch (op) {
      case kUnary: return op_unary(g_, s);
      case kActivation: return op_activation(g_, s);
      case kPow: return op_pow(g_, s);
      case kRounding: return op_rounding(g_, s);
      case kArith: return op_arith(g_, s);
      case kDiv: return op_div(g_, s);
      case kRsub: return op_rsub(g_, s);
      case kMaxMin: return op_max_min(g_, s);
      case kCompare: return op_compare(g_, s);
      case kWhere: return op_where(g_, s);
      case kMaskedFill: return op_masked_fill(g_, s);
      case kLogicalNot: return op_logical_not(g_, s);
      case kMulMask: return op_mul_mask(g_, s);
      case kSoftmax: return op_softmax(g_, s);
      case kLayerNorm: return op_layer_norm(g_, s);
      case kReduce: return op_reduce(g_, s);
      case kBatchNorm: return op_batch_norm(g_, s);
      case kContiguous: return op_contiguous(g_, s);
      case kTranspose: return op_transpose(g_, s);
      case kPermute: return op_permute(g_, s);
      case kUnsqueeze: return op_unsqueeze(g_, s);
      case kSlice: return op_slice(g_, s);
      case kExpand: return op_expand(g_, s);
      case kReshape: return op_reshape(g_, s);
      case kInPlace: return op_inplace(g_, s);
      case kInPlaceView: return op_inplace_view(g_, s);
      case kRepeat: return g_.repeat_statement();
      case kConv2d: return op_conv2d(g_, s);
      case kAttention: return op_attention(g_, s);
      case kLinear: return op_linear(g_, s);
      case kMaxPool2d: return op_max_pool2d(g_, s);
      case kCatChannels: return op_cat_channels(g_, s);
    }
    return false;
  }

  std::vector<int> outputs() {
    const int last = static_cast<int>(g_.vars().size()) - 1;
    std::vector<int> outs = {last};
    std::vector<int> computed;
    for (int i = 0; i < last; ++i) {
      if (var(g_, i).compute) computed.push_back(i);
    }
    // Something computed is always returned: a graph of views alone generates no kernel.
    if (!var(g_, last).compute && !computed.empty()) {
      outs.push_back(computed.back());
      computed.pop_back();
    }
    for (int extra = g_.weighted({5, 3, 2}); extra > 0 && !computed.empty(); --extra) {
      size_t k = static_cast<size_t>(g_.pick(static_cast<int>(computed.size())));
      outs.push_back(computed[k]);
      computed.erase(computed.begin() + static_cast<long>(k));
    }
    return outs;
  }

  GeneratorState g_;
  std::vector<int> weights_;
};

}  // namespace

FuzzCase generate_case(uint64_t seed, const GeneratorOptions& options) { return Generator(seed, options).run(); }

}  // namespace tcprof::fuzz
