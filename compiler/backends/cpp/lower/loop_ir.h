// The loop-level IR of the cpp backend. A captured graph is lowered into a list of steps: views
// and compute-bound ops stay LibTorch calls ("extern" steps, views cost nothing there), and runs
// of pointwise and reduction ops become generated kernels. A kernel is a small expression DAG
// evaluated over an index space:
//   - pointwise: every element of the output shape (inputs broadcast into it);
//   - row: outer elements x one row (the trailing dimension(s)); reductions over the row feed
//     element-wise epilogues (softmax, layer norm, mean).
//   - column: the same space, but its sums run over the outer elements, one per element of the
//     row (a bias gradient: the sum over [0, 1] of a [B, T, C] gradient, C sums); the row is
//     the inner loop, so every load stays contiguous and the sums accumulate a vector at a time.
// Sizes and strides are kernel arguments, so one kernel serves every shape of the same rank
// (dynamic dimensions) and every stride pattern with the same innermost-stride class.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tcprof {

// Element types of kernel values. BF16 and F16 are stored in 16 bits and computed in float (as
// LibTorch's CUDA kernels compute them); only the cuda backend lowers them (LowerContext::
// low_precision), the cpp backend leaves their ops to LibTorch.
enum class ElemType : uint8_t { F32, F64, I64, I32, Bool, BF16, F16 };
const char* c_type(ElemType t);  // the type values are computed in: float for BF16 and F16
bool is_16_bit_float(ElemType t);
const char* elem_type_name(ElemType t);
bool is_floating(ElemType t);

// The primitive set every lowered op decomposes into.
enum class ExprOp : uint8_t {
  Load,   // kernel input `input` at the current element
  Const,  // `value` (as `type`)
  RowLen, // the row length (row kernels)
  Cast,
  // unary
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Erf, NormCdf, GeluGrad, Sigmoid, Sin, Cos, Floor, Ceil, Round, Recip, Not,
  // binary
  Add, Sub, Mul, Div, Max, Min, Pow, Eq, Ne, Lt, Le, Gt, Ge, And, Or,
  // ternary
  Where,  // args: cond, then, else
  Fma,    // args: a, b, c: a * b + c rounded once where the CPU has FMA (eager's add/sub with alpha)
  // row reductions over an element expression (value is uniform over the row)
  ReduceSum, ReduceMax, ReduceMin,
};
const char* expr_op_name(ExprOp op);
bool is_reduction(ExprOp op);

struct ExprNode {
  ExprOp op = ExprOp::Const;
  ElemType type = ElemType::F32;
  int input = -1;   // Load
  double value = 0; // Const
  std::vector<int> args;
};

// How a kernel input's innermost dimension is read: contiguous (vectorisable), broadcast (one
// value for the whole inner loop) or strided.
enum class InnerStride : uint8_t { Contiguous, Broadcast, Strided };

struct KernelInput {
  int slot = -1;      // graph slot read, or
  int constant = -1;  // a compile-time tensor of the lowered program (folded parameters)
  ElemType type = ElemType::F32;
  InnerStride inner = InnerStride::Contiguous;
};

struct KernelOutput {
  int slot = -1;
  int expr = -1;        // node computing it
  bool per_row = false; // row kernels: one value per row; column kernels: one per row element (reduction results)
  bool keepdim = false; // per-row outputs: the reduced dimensions stay as size 1
};

enum class KernelKind : uint8_t { Pointwise, Row, Column };
const char* kernel_kind_name(KernelKind k);

struct Kernel {
  KernelKind kind = KernelKind::Pointwise;
  std::string name;           // e.g. "k3_add_gelu"
  int rank = 1;               // loop nest rank: the index space's rank (row: outer dims + 1)
  int row_dims = 1;           // row and column kernels: trailing dimensions folded into the row
  std::vector<KernelInput> inputs;
  std::vector<KernelOutput> outputs;
  std::vector<ExprNode> nodes;  // topological: args before users
  std::vector<int> ops;         // captured-graph op indices fused here (for records and fallback)
  std::vector<std::string> op_names;
  // The dim order the loop nest walks (outermost first) when eager wrote the outputs in another
  // memory order than the logical one (channels-last after a permute, ConvNeXt): the outputs then
  // have eager's strides, so their readers (a convolution, a permute + layer norm) find the layout
  // eager gave them. Empty: the logical order.
  std::vector<int> order;
};

// A kernel chosen for an op eager runs on a slow path, specialised on the shapes seen at compile
// time and checked at run time: generated depthwise convolution and max pooling, and 1x1
// convolutions as one GEMM per image (no generated code: BLAS, without oneDNN's per-call weight
// reorder, 3-4x faster on large feature maps).
struct WindowKernel {
  // MkldnnConv: oneDNN with the weight reordered once at compile time (eager reorders it on
  // every call; for deep layers that reorder is a quarter of the convolution).
  // LinearGemv / LinearGemm: a linear with constant weights as BLAS's matrix-vector product (one
  // row) or one GEMM against the weight prepared once by the runner (schedule/plan_linear.h).
  // Attention: matmul(q, kT) [* or / scale] [masked_fill(constant mask, -inf)] softmax(-1)
  // matmul(., v) as one kernel over blocks of query rows (schedule/plan_attention.h): the scores
  // never go to memory, and key blocks the mask removes from every row of a block are skipped.
  // ScaledDotProductAttention: the same chain as Attention (the cuda backend's plan), run as one
  // at::scaled_dot_product_attention call (flash or memory-efficient kernels on a GPU), the mask
  // as is_causal or as a constant boolean mask.
  // Gemm: a matrix product of two values of the graph (a training graph's linear, whose weight is
  // an input, and the mm and matmul of its gradients) through oneDNN's matmul on the operands'
  // own strides (schedule/plan_gemm.h, run/onednn_gemm.h).
  enum class Kind : uint8_t {
    DepthwiseConv2d, MaxPool2d, Conv1x1Gemm, MkldnnConv, LinearGemv, LinearGemm, Attention, ScaledDotProductAttention, Gemm
  } kind = Kind::DepthwiseConv2d;
  bool generated() const { return kind == Kind::DepthwiseConv2d || kind == Kind::MaxPool2d || kind == Kind::Attention; }
  // A GEMM with an activation has a generated epilogue too where its library cannot apply the
  // activation in its own output pass (MKL, BLAS; `epilogue_kernel`, set by the schedule): bias +
  // activation in one pass over the output.
  bool generated_epilogue() const { return kind == Kind::LinearGemm && activation != Activation::None && epilogue_kernel; }
  std::string name;
  int op = -1;           // captured-graph op index
  int epilogue_op = -1;  // a clamp (relu/relu6/hardtanh) fused into it, or -1
  int input_slot = -1, output_slot = -1;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t out_features = 0;              // linear: n rows, c in-features (weight_slot: [N, K]; GEMM: prepared by the runner)
  int weight_slot = -1, bias_slot = -1;  // conv: constant slots (weight [C,1,kh,kw], bias [C])
  float clamp_lo = 0, clamp_hi = 0;      // fused activation (hardtanh) when has_clamp
  bool has_clamp = false;
  // LinearGemm: the activation of its epilogue_op, applied in the GEMM's output pass (oneDNN) or in
  // the generated epilogue after it (run/linear_gemm.h).
  enum class Activation : uint8_t { None, Gelu, GeluTanh } activation = Activation::None;
  bool epilogue_kernel = false;
  // Attention: input_slot is q [B, H, T, D] (or [H, T, D], [T, D]), kt_slot kT [.., D, S], v_slot v
  // [.., S, Dv]; the output is [.., T, Dv]. `fused_ops` are the ops after `op` it computes (scale,
  // mask, softmax, second matmul). Row i of the scores keeps keys [keep_lo[i], keep_hi[i]) (the
  // constant mask; empty: every key), the rest is -inf as masked_fill makes it.
  struct AttentionShape {
    int kt_slot = -1, v_slot = -1;
    int64_t t = 0, s = 0, d = 0, dv = 0;
    double scale = 1;
    bool divide = false;  // the scale op is a division by `scale`
    std::vector<int32_t> keep_lo, keep_hi;
    // aten::_native_multi_head_attention (nn.MultiheadAttention's inference path, ViT's): `op`
    // itself, self-attention of input_slot [B, T, E] with `heads` heads. The QKV projection
    // (weight_slot, bias_slot) and the output projection (these constants; both weights [N, K], n
    // the rows) run as GEMMs around the kernel (run/linear_gemm.h); the weights output is None.
    int heads = 0;
    int proj_weight = -1, proj_bias = -1;
    // ScaledDotProductAttention: the kept ranges are the causal mask (row i keeps keys [0, i]), or
    // `keep_mask` is a constant bool [T, S], true where a key takes part (SDPA's attn_mask).
    bool causal = false;
    int keep_mask = -1;
  } attention;
  // Gemm: input_slot is a ([.., K] rows for linear and matmul, [M, K] for mm, [.., M, K] for a
  // batched matmul), `b_slot` b ([K, N], [.., K, N] batched; linear's weight [N, K], read
  // transposed), `bias_slot` linear's bias (-1: none); n rows (all batches'), c K, out_features N
  // and `batch` (1: not batched) as compiled. Whether each operand was compiled transposed
  // (column-major), for the autotune key: oneDNN's speed differs between the two.
  struct GemmOperands {
    int b_slot = -1, bias_slot = -1;
    int64_t batch = 1;
    bool b_is_weight = false;
    bool a_transposed = false, b_transposed = false;
  } gemm;
  std::vector<int> fused_ops;
};

// Every captured op a window kernel computes, in graph order (what runs through LibTorch when it
// cannot).
std::vector<int> covered_ops(const WindowKernel& k);

// Where a value lives between steps (the layout pass, schedule/plan_onednn_layout.h). Dense is a
// LibTorch tensor in NCHW; Blocked is oneDNN's blocked layout (nChw16c / nChw8c, chosen by the
// convolution primitive for this CPU), read only by chain steps (convolutions and channel ops).
enum class ValueLayout : uint8_t { Dense, Blocked, Both };
const char* value_layout_name(ValueLayout l);

// One step of an oneDNN convolution chain: the convolution with folded batch norm, weights
// prepacked once at compile time, and post-ops fused into the primitive (a residual add as
// oneDNN's sum post-op, then one activation). Its activations stay in the blocked layout between
// convolutions of the chain; reorders remain only where a value enters or leaves it.
struct OnednnConv {
  enum class Activation : uint8_t { None, Relu, Clip, Hardswish, Silu, Sigmoid, Tanh, Gelu };
  std::string name;
  int op = -1;                // captured-graph conv op
  std::vector<int> post_ops;  // captured-graph ops fused into it, in order (add, activation)
  int input_slot = -1, residual_slot = -1, output_slot = -1;  // output: after the post-ops
  int conv_slot = -1;         // the convolution's own output slot (before the post-ops)
  ValueLayout input_layout = ValueLayout::Dense;     // how the input arrives
  ValueLayout residual_layout = ValueLayout::Dense;  // how the residual arrives
  ValueLayout output_layout = ValueLayout::Dense;    // what readers need
  bool residual_in_place = false;  // this step is the residual's last reader: write over it
  // The dense form of the input, and of the output and residual, where they are dense: the memory
  // format eager gave them in the capture, NCHW or channels-last (ConvNeXt's convolutions read a
  // layer norm's permuted output, and eager's convolution then writes channels-last too).
  bool input_channels_last = false, output_channels_last = false;
  // Those dense forms by oneDNN's names ("nchw", "nhwc"), as explain and the IR show them.
  const char* dense_input_format() const { return input_channels_last ? "nhwc" : "nchw"; }
  const char* dense_output_format() const { return output_channels_last ? "nhwc" : "nchw"; }
  int64_t n = 0, c = 0, h = 0, w = 0, oc = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  int weight = -1, bias = -1;  // constants (weight [OC, C/groups, kh, kw], bias [OC])
  Activation activation = Activation::None;
  float alpha = 0, beta = 0;   // Clip: lo, hi
  float residual_scale = 1;
  // Channel ops computed inside the step on the chain's own buffers, so that their operand need
  // not leave the blocked layout (EfficientNet's squeeze-and-excitation): the input multiplied by
  // a per-channel [N, C, 1, 1] value before the convolution (its product read by nothing else),
  // and the global average pool of the step's output.
  int scale_op = -1, scale_slot = -1;  // aten::mul(input, scale): input_slot is the other operand
  int pool_op = -1, pooled_slot = -1;  // aten::adaptive_avg_pool2d(output, 1), dense [N, OC, 1, 1]
};
// A step's captured ops in the order they compute: the scale, the convolution, its post-ops, the pool.
std::vector<int> step_ops(const OnednnConv& c);
const char* activation_name(OnednnConv::Activation a);

// A channel op on chain values, computed in their own layout so that they need not leave the
// chain (SqueezeNet's fire modules concatenate two convolutions' outputs, and max pools sit between
// them). Its inputs are values chain steps end with (a convolution's or another channel op's); its
// output is a chain value whose layout comes from its readers, as a convolution's does.
struct ChainChannelOp {
  enum class Kind : uint8_t { Cat, MaxPool };
  Kind kind = Kind::Cat;
  std::string name;  // "c0_cat", "c1_max_pool"
  int op = -1;       // captured-graph op
  std::vector<int> input_slots;
  std::vector<int64_t> input_channels;  // per input
  int output_slot = -1;
  ValueLayout output_layout = ValueLayout::Dense;  // what readers need
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;  // c: output channels
  // MaxPool
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false;
};
const char* channel_op_name(ChainChannelOp::Kind k);

struct Step {
  enum class Kind : uint8_t { Extern, Kernel, Window, Onednn, ChannelOp } kind = Kind::Extern;
  // Extern: captured op index; Kernel: kernel index; Window: window kernel index; Onednn: oneDNN
  // convolution index; ChannelOp: chain channel op index
  int index = 0;
};

struct LoopProgram {
  std::vector<Step> steps;
  std::vector<Kernel> kernels;
  std::vector<WindowKernel> window_kernels;
  std::vector<OnednnConv> onednn_convs;
  std::vector<ChainChannelOp> channel_ops;
  // Ops that stay LibTorch calls although they are not views or compute-bound externs.
  std::vector<std::string> fallback_ops;
};

// Readable IR, e.g. "k2 pointwise rank 3 [aten::add, aten::gelu]: t0 = load in0 ...".
std::string to_string(const Kernel& k);

}  // namespace tcprof
