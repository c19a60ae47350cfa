// The optimizer step alone: torch::optim (Adam, SGD) against the fused step (compiler/optim) on a
// model's real parameters with real-sized gradients, medians in one process, one thread.
//   build/bench/optimizer_step_bench build/samples/models/gpt.pt [steps]
#include <torch/optim.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include "compiler/frontend/model_loader.h"
#include "compiler/optim/fused_optimizer.h"
#include "core/clock.h"

using namespace tcprof;

namespace {

std::vector<at::Tensor> parameters_with_grads(const std::string& model) {
  std::vector<at::Tensor> params;
  for (const auto& p : load_model(model).module.parameters()) {
    at::Tensor q = p.detach().clone().set_requires_grad(true);
    q.mutable_grad() = at::randn_like(q) * 1e-2;
    params.push_back(q);
  }
  return params;
}

double median_ms(int steps, const std::function<void()>& step) {
  for (int i = 0; i < 3; ++i) step();  // warm-up: state allocation, caches, the kernel's first load
  std::vector<int64_t> ns;
  for (int i = 0; i < steps; ++i) {
    int64_t start = now_ns();
    step();
    ns.push_back(now_ns() - start);
  }
  std::sort(ns.begin(), ns.end());
  return static_cast<double>(ns[ns.size() / 2]) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: optimizer_step_bench MODEL.pt [steps]\n");
    return 2;
  }
  const int steps = argc > 2 ? std::atoi(argv[2]) : 50;
  at::set_num_threads(1);
  auto params = parameters_with_grads(argv[1]);
  int64_t numel = 0;
  for (const auto& p : params) numel += p.numel();
  fmt::print("{}: {} parameters in {} tensors, 1 thread, median of {} steps\n", argv[1], numel, params.size(), steps);
  fmt::print("{:<6} {:>16} {:>12} {:>8}  {}\n", "kind", "torch::optim ms", "fused ms", "speedup", "bytes moved/step (fused)");
  for (const char* kind : {"adam", "sgd"}) {
    auto a = params, b = params;
    for (auto& p : a) { auto g = p.grad(); p = p.detach().clone().set_requires_grad(true); p.mutable_grad() = g; }
    for (auto& p : b) { auto g = p.grad(); p = p.detach().clone().set_requires_grad(true); p.mutable_grad() = g; }
    std::unique_ptr<torch::optim::Optimizer> eager;
    if (std::string(kind) == "adam") eager = std::make_unique<torch::optim::Adam>(a, torch::optim::AdamOptions(1e-3));
    else eager = std::make_unique<torch::optim::SGD>(a, torch::optim::SGDOptions(1e-3).momentum(0.9));
    FusedOptimizerOptions o;
    o.kind = kind;
    o.lr = 1e-3;
    if (o.kind == "sgd") o.momentum = 0.9;
    FusedOptimizer fused(b, o);
    double eager_ms = median_ms(steps, [&] { eager->step(); });
    double fused_ms = median_ms(steps, [&] { fused.step(); });
    // Adam reads p, g, m, v and writes p, m, v; SGD with momentum reads p, g, buf, writes p, buf.
    int64_t bytes = numel * 4 * (o.kind == "adam" ? 7 : 5);
    fmt::print("{:<6} {:>16.3f} {:>12.3f} {:>7.2f}x  {:.1f} MB ({:.1f} GB/s)\n", kind, eager_ms, fused_ms,
               eager_ms / fused_ms, static_cast<double>(bytes) / 1e6, static_cast<double>(bytes) / 1e6 / fused_ms);
  }
  return 0;
}
