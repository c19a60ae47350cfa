#include "compiler/optim/fused_optimizer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compiler/optim/optimizer_update.h"
#include "core/error.h"

namespace tcprof {
namespace {

// Scalars passed to the kernel, by index.
enum Scalar { kLr, kBeta1, kBeta2, kEps, kWeightDecay, kMomentum, kDecoupled, kCount };

// One kernel source for every parameter set: the parameters are a list of arrays, split into
// chunks that OpenMP threads share; each element's update is optimizer_update.h's, the same as
// the CUDA step's. Scalars arrive as doubles and are rounded to float as LibTorch rounds them.
constexpr const char* kPrologue = R"cpp(
#include <math.h>
#include <cstdint>
#include <vector>

#define TC_OPTIM_FN inline
)cpp";

constexpr const char* kLoops = R"cpp(
namespace {
constexpr int64_t kChunk = 16384;

template <typename Update>
void for_each_chunk(const int64_t* sizes, int64_t count, Update update) {
  std::vector<int64_t> first(count + 1, 0);  // first chunk of each parameter
  for (int64_t i = 0; i < count; ++i) first[i + 1] = first[i] + (sizes[i] + kChunk - 1) / kChunk;
  const int64_t chunks = first[count];
  #pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t i = 0;
    while (first[i + 1] <= c) ++i;
    const int64_t begin = (c - first[i]) * kChunk;
    const int64_t end = begin + kChunk < sizes[i] ? begin + kChunk : sizes[i];
    update(i, begin, end);
  }
}
}  // namespace

// `per_param`: each parameter's step size and sqrt of its bias correction.
extern "C" void tcprof_adam_step(float* const* p, const float* const* g, float* const* m,
                                 float* const* v, const int64_t* sizes, int64_t count,
                                 const double* s, const double* per_param) {
  tc_adam_scalars k;
  k.b1 = (float)s[1], k.b2 = (float)s[2], k.eps = (float)s[3], k.wd = (float)s[4];
  k.one_minus_b1 = (float)(1 - s[1]), k.one_minus_b2 = (float)(1 - s[2]);
  k.decoupled = s[6] != 0, k.decay = s[4] != 0 && !k.decoupled;
  k.keep = (float)(1 - s[0] * s[4]);
  for_each_chunk(sizes, count, [&](int64_t i, int64_t begin, int64_t end) {
    const float neg_step = (float)(-per_param[2 * i]), sqrt_bias2 = (float)per_param[2 * i + 1];
    float* __restrict pi = p[i];
    const float* __restrict gi = g[i];
    float* __restrict mi = m[i];
    float* __restrict vi = v[i];
    #pragma omp simd
    for (int64_t j = begin; j < end; ++j) tc_adam_update(pi[j], gi[j], mi[j], vi[j], k, neg_step, sqrt_bias2);
  });
}

// `per_param`: 1 for a parameter whose momentum buffer starts now (its first step), else 0.
extern "C" void tcprof_sgd_step(float* const* p, const float* const* g, float* const* buf,
                                float* const*, const int64_t* sizes, int64_t count,
                                const double* s, const double* per_param) {
  const float neg_lr = (float)(-s[0]), wd = (float)s[4], momentum = (float)s[5];
  const bool decay = s[4] != 0, use_momentum = s[5] != 0;
  for_each_chunk(sizes, count, [&](int64_t i, int64_t begin, int64_t end) {
    const bool first = per_param[2 * i] != 0;
    float* __restrict pi = p[i];
    const float* __restrict gi = g[i];
    float* __restrict bi = buf[i];
    if (use_momentum) {
      #pragma omp simd
      for (int64_t j = begin; j < end; ++j) tc_sgd_update(pi[j], gi[j], bi[j], neg_lr, wd, momentum, decay, true, first);
    } else {
      #pragma omp simd
      for (int64_t j = begin; j < end; ++j) {
        float unused = 0;
        tc_sgd_update(pi[j], gi[j], unused, neg_lr, wd, momentum, decay, false, false);
      }
    }
  });
}
)cpp";

const std::string& kernel_source() {
  static const std::string source = std::string(kPrologue) + optimizer_update_source() + kLoops;
  return source;
}

}  // namespace

std::string FusedOptimizer::unsupported_reason(const std::vector<at::Tensor>& params) {
  for (const auto& p : params) {
    if (!p.device().is_cpu()) return fmt::format("a parameter is on {}", p.device().str());
    if (p.scalar_type() != at::kFloat) return fmt::format("a parameter is {}", c10::toString(p.scalar_type()));
    if (!p.is_contiguous()) return "a parameter is not contiguous";
  }
  return shared_parameter_memory(params);
}

std::string shared_parameter_memory(const std::vector<at::Tensor>& params) {
  struct Span {
    c10::Device device;
    uintptr_t begin, end;
    size_t index;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i];
    if (p.numel() == 0) continue;
    const auto begin = reinterpret_cast<uintptr_t>(p.data_ptr());
    spans.push_back({p.device(), begin, begin + static_cast<uintptr_t>(p.numel() * p.element_size()), i});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.device.type() != b.device.type()   ? a.device.type() < b.device.type()
           : a.device.index() != b.device.index() ? a.device.index() < b.device.index()
                                                  : a.begin < b.begin;
  });
  for (size_t k = 1; k < spans.size(); ++k) {
    const Span &a = spans[k - 1], &b = spans[k];
    if (a.device == b.device && b.begin < a.end) {
      return fmt::format("parameters {} and {} share memory (a tied weight listed twice?)", std::min(a.index, b.index),
                         std::max(a.index, b.index));
    }
  }
  return "";
}

FusedOptimizer::FusedOptimizer(std::vector<at::Tensor> params, FusedOptimizerOptions options)
    : params_(std::move(params)), options_(options) {
  check_fused_optimizer_kind(options_.kind);
  std::string why = unsupported_reason(params_);
  if (!why.empty()) throw Error(ErrorKind::Usage, "the fused optimizer step needs CPU float32 parameters: " + why);
  const bool adam = options_.kind != "sgd";
  param_steps_.assign(params_.size(), 0);
  for (const auto& p : params_) {
    if (adam || options_.momentum != 0) state1_.push_back(at::zeros_like(p));
    if (adam) state2_.push_back(at::zeros_like(p));
  }
  KernelLibraryResult built = KernelLibraryBuilder::shared().compile(kernel_source());
  library_ = built.library;
  step_fn_ = reinterpret_cast<StepFn>(library_->symbol(adam ? "tcprof_adam_step" : "tcprof_sgd_step"));
}

const std::string& FusedOptimizer::source() { return kernel_source(); }

void check_fused_optimizer_kind(const std::string& kind) {
  if (kind != "adam" && kind != "adamw" && kind != "sgd") {
    throw Error(ErrorKind::Usage, fmt::format("unknown optimizer '{}' (use sgd, adam or adamw)", kind));
  }
}

std::string describe_optimizer_step(const FusedOptimizerOptions& o, const std::vector<at::Tensor>& params,
                                    const std::string& where) {
  int64_t elements = 0;
  for (const auto& p : params) elements += p.numel();
  std::string what = fmt::format("{} over {} parameters, {:.2f} M elements{}: lr {}", o.kind, params.size(),
                                 static_cast<double>(elements) / 1e6, where, o.lr);
  if (o.kind != "sgd") what += fmt::format(", betas {} {}, eps {}", o.beta1, o.beta2, o.eps);
  if (o.kind == "sgd" && o.momentum != 0) what += fmt::format(", momentum {}", o.momentum);
  if (o.weight_decay != 0) what += fmt::format(", weight decay {}", o.weight_decay);
  return what;
}

std::string FusedOptimizer::describe() const { return describe_optimizer_step(options_, params_, ""); }

void FusedOptimizer::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

void FusedOptimizer::step() {
  ++step_;
  const bool adam = options_.kind != "sgd";
  std::vector<float*> p, m, v;
  std::vector<const float*> g;
  std::vector<int64_t> sizes;
  std::vector<double> per_param;
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& grad = params_[i].grad();
    if (!grad.defined()) continue;  // as torch::optim: no gradient, no step (and no step count)
    if (!grad.is_contiguous()) params_[i].mutable_grad() = grad.contiguous();
    const int64_t t = ++param_steps_[i];
    p.push_back(params_[i].data_ptr<float>());
    g.push_back(params_[i].grad().data_ptr<float>());
    m.push_back(state1_.empty() ? nullptr : state1_[i].data_ptr<float>());
    v.push_back(state2_.empty() ? nullptr : state2_[i].data_ptr<float>());
    sizes.push_back(params_[i].numel());
    if (adam) {
      per_param.push_back(options_.lr / (1 - std::pow(options_.beta1, static_cast<double>(t))));
      per_param.push_back(std::sqrt(1 - std::pow(options_.beta2, static_cast<double>(t))));
    } else {
      per_param.push_back(t == 1 ? 1 : 0);
      per_param.push_back(0);
    }
  }
  if (p.empty()) return;
  double s[kCount] = {};
  s[kLr] = options_.lr;
  s[kBeta1] = options_.beta1;
  s[kBeta2] = options_.beta2;
  s[kEps] = options_.eps;
  s[kWeightDecay] = options_.weight_decay;
  s[kMomentum] = options_.momentum;
  s[kDecoupled] = options_.kind == "adamw" ? 1 : 0;
  step_fn_(p.data(), g.data(), m.data(), v.data(), sizes.data(), static_cast<int64_t>(sizes.size()), s,
           per_param.data());
}

}  // namespace tcprof
