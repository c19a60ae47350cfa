// One convolution of an oneDNN chain (OnednnConv in loop_ir.h) at run time: the primitive created
// once for the compiled shapes, its weight reordered once into the layout it wants, and post-ops
// (sum for the residual, one activation) fused into it. Values between convolutions of a chain stay
// in the primitive's blocked layout; reorders happen only where a value enters or leaves the chain,
// or where two primitives chose different blocked layouts. Only this file and onednn_linear.cpp include oneDNN
// (through run/onednn_support.h).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

// True when tcprof was built with oneDNN's headers and TCPROF_ONEDNN is not 0.
bool onednn_layout_enabled();
// "2.6.3" (the library loaded), or "" without oneDNN: part of the autotune cache key.
std::string onednn_version();

// A chain value in its chain's layout: a byte buffer and the layout it is in (oneDNN's memory
// descriptor, defined in run/onednn_support.h: only the oneDNN files read it).
struct BlockedLayout;
struct BlockedValue {
  at::Tensor buffer;
  std::shared_ptr<const BlockedLayout> layout;
};

// The activation layout a chain's primitives are built for. oneDNN picks per primitive (Any), which
// is not always best for the chain as a whole (MobileNetV2 on this Zen 4: nhwc everywhere, 8.8 ms;
// nChw16c, 8.1 ms), so the autotune phase times the chain with each and keeps the fastest.
// Blocked16/Blocked8 ask for nChw16c/nChw8c where the channel count is a multiple of the block.
// Blocked16Winograd is nChw16c with the 3x3 stride-1 convolutions (16k channels, outputs of 14x14
// or more) through oneDNN's Winograd algorithm: a third to half of the multiplications (ResNet18's 3x3 convolutions 2.0 ->
// 1.0 ms each); its float error against a float64 reference is that of the direct algorithm
// (tests/compiler/layout_pass_test.cpp). A source with inf, NaN or |x| >= 1e30, which Winograd's
// transforms would spread over a whole tile (inf - inf) where eager's result has them only in the
// 3x3 neighbourhood, runs through the direct algorithm instead (checked on every call).
enum class ChainFormat : uint8_t { Any, Blocked16, Blocked8, Blocked16Winograd };
const char* chain_format_name(ChainFormat f);
constexpr int kChainFormats = 4;

class OnednnConvolution {
 public:
  // Throws std::runtime_error when this oneDNN cannot build the primitive (the scheduler then keeps
  // LibTorch's convolution).
  OnednnConvolution(const OnednnConv& conv, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                    ChainFormat format = ChainFormat::Any);
  ~OnednnConvolution();
  OnednnConvolution(const OnednnConvolution&) = delete;
  OnednnConvolution& operator=(const OnednnConvolution&) = delete;

  // Runs the step. The input and the residual each come blocked (from a chain step) or dense
  // (NCHW, contiguous, the compiled shape); `residual_owned` allows writing the output over the
  // residual's buffer. Fills `blocked` and/or `dense` as the step's output layout asks. Returns
  // false when a dense operand does not have the compiled shape, or when oneDNN failed to run it
  // on dense operands (the caller runs LibTorch instead). With `scale` ([N, C, 1, 1]) the input is
  // multiplied by it per channel first, in the input's layout; with `pooled` the output's global
  // average pool ([N, OC, 1, 1], dense) is computed from the output's own layout.
  bool run(const BlockedValue* input_blocked, const at::Tensor* input_dense, BlockedValue* residual_blocked,
           const at::Tensor* residual_dense, bool residual_owned, BlockedValue* blocked, at::Tensor* dense,
           const at::Tensor* scale = nullptr, at::Tensor* pooled = nullptr);

  // The layouts the primitive chose, e.g. "nChw16c", for the IR record.
  std::string input_format() const;
  std::string output_format() const;
  // True when the primitive computes with Winograd (ChainFormat::Blocked16Winograd, where it applies).
  bool winograd() const;
  const OnednnConv& conv() const { return conv_; }

 private:
  struct Impl;
  OnednnConv conv_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tcprof
