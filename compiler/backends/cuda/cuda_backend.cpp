// The cuda backend: captured graph -> the cpp backend's graph passes, lowering and fusion (the
// device-neutral middle) -> CUDA C++ per graph (codegen_cuda.h) -> NVRTC to a CUBIN -> run. A graph
// on a GPU runs its kernels from the CUBIN through the driver (cuda_driver.h); a graph on the CPU
// (no GPU here, CI) runs the same CUDA source compiled for the CPU under cuda_emulation.h, so that
// every generated kernel is checked against eager without a device. Extern steps (matmuls,
// convolutions, views) are LibTorch calls on the graph's device: cuBLAS and cuDNN on a GPU.
#include <cstdlib>

#include <ATen/ATen.h>

#include <fmt/format.h>

#include "compiler/backends/backend.h"
#include "compiler/backends/compile_steps.h"
#include "compiler/backends/cpp/lower/lower_ops.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cpp/run/program_runner.h"
#include "compiler/backends/cpp/schedule/schedule_fusion.h"
#include "compiler/backends/cuda/conv_epilogue.h"
#include "compiler/backends/cuda/conv_layout.h"
#include "compiler/backends/cuda/cuda_driver.h"
#include "compiler/backends/cuda/cuda_emulation.h"
#include "compiler/backends/cuda/cuda_graph_replay.h"
#include "compiler/backends/cuda/cuda_launch.h"
#include "compiler/backends/cuda/linear_epilogue.h"
#include "compiler/frontend/guards.h"
#include "compiler/torch_compat.h"
#include "compiler/toolchain/cubin_cache.h"
#include "compiler/toolchain/kernel_library.h"
#include "compiler/toolchain/nvrtc_compiler.h"
#include "core/error.h"
#include "core/log.h"

namespace tcprof {
namespace {

// Emulated blocks are fibers meeting at barriers: two warps exercise every step of a
// block reduction (the butterfly and the warps' partials) at a cost the CPU can bear.
LaunchLimits emulation_limits() {
  LaunchLimits l;
  l.pointwise_block = 64;
  l.max_row_block = 64;
  l.max_grid = 8;
  if (const char* env = std::getenv("TCPROF_CUDA_EMULATION_BLOCK")) {
    unsigned b = static_cast<unsigned>(std::atoi(env));
    if (b >= 32 && b <= 1024 && b % 32 == 0) l.pointwise_block = l.max_row_block = b;
  }
  return launch_limits_from_env(l);
}

class CudaBackend : public Backend {
 public:
  CudaBackend(bool strict, std::string cache_dir, CudaOptions options) : strict_(strict), options_(std::move(options)) {
    if (!cache_dir.empty()) {
      KernelLibraryOptions o;
      o.cache_dir = cache_dir;
      o.openmp = false;
      own_compiler_ = std::make_unique<KernelLibraryBuilder>(o);
    }
  }
  std::string name() const override { return "cuda"; }
  // A GPU's graphs run their CUBIN; the CPU's run the same source in emulation.
  bool generates_code_for(const c10::Device& device) const override { return device.is_cuda() || device.is_cpu(); }

  std::unique_ptr<CompiledGraph> compile(const CapturedGraph& captured, const std::vector<c10::IValue>& inputs,
                                         CpuProfiler* profiler) override {
    CompileReport report;
    const c10::Device device = graph_device(captured, inputs);
    std::string why_eager = autograd_reason(captured, inputs);
    if (why_eager.empty()) why_eager = module_state_reason(captured);
    if (!why_eager.empty()) {
      report.hints.push_back(hint("autograd", nullptr, "graph runs eagerly: " + why_eager +
                                                           " (the cuda backend compiles inference graphs)"));
      return eager(captured, profiler, std::move(report));
    }
    if (!device.is_cuda() && !device.is_cpu()) {
      report.hints.push_back(hint("no_gpu_codegen", nullptr, fmt::format("graph on {} runs eagerly through LibTorch", device.str())));
      return eager(captured, profiler, std::move(report));
    }
    Phases phase(report);
    // 1. Decompose: the same passes as the cpp backend.
    phase.begin("decompose");
    CapturedGraph g = captured;
    std::vector<c10::IValue> examples = example_run(g, inputs);
    g.capture_values.reset();
    InputBindings bindings(inputs);
    PassContext ctx{g, examples, bindings};
    run_inference_passes(ctx);
    // A linear's ReLU or tanh-GELU in cuBLASLt's epilogue (on the CPU the same op, unfused, so
    // that the emulation runs the program the GPU gets).
    // The A/B switches, read (and a malformed one refused) once, whether or not kernels come of it.
    const CudaFeatures features = cuda_features_from_env();
    const bool conv_epilogues = conv_epilogues_from_env();
    const LaunchLimits limits = device.is_cuda() ? launch_limits_from_env(LaunchLimits{}) : emulation_limits();
    const std::vector<std::string> epilogues = features.linear_epilogues ? fuse_linear_activation(ctx) : std::vector<std::string>{};
    // On a GPU, convolutions in the layout that measures faster; the examples then carry the
    // layouts eager gives every value, which the fused kernels follow.
    std::string layout;  // what was measured, for the IR's header
    const bool channels_last = device.is_cuda() && choose_conv_channels_last(g, inputs, &layout);
    // Opt-in until a GPU measures it: a convolution's ReLU (and residual add) inside cuDNN's call.
    const std::vector<std::string> conv_fused = conv_epilogues ? fuse_conv_relu(ctx) : std::vector<std::string>{};
    if (split_conv_bias(ctx) > 0 || channels_last || !conv_fused.empty()) examples = example_run(g, inputs);
    // 2. Lower and 3. schedule: the device-neutral middle, without the CPU's planners.
    phase.begin("lower");
    LowerContext lower{examples, bindings, device, /*low_precision=*/true};
    std::vector<OpLowering> lowerings = lower_graph_ops(g, lower);
    phase.begin("schedule");
    ScheduledProgram program = schedule_graph(g, lower, lowerings, ScheduleTarget::Cuda);
    report.ir = program_ir(g, program);
    summarize(g, program, report);
    // 4. Codegen: one CUDA unit; identical kernels once.
    phase.begin("codegen");
    CudaUnit unit = generate_cuda_unit(program.program, features);
    report.code = unit.source;
    report.unique_kernels = unit.unique_kernels;
    if (log_enabled(LogChannel::OutputCode)) log(LogChannel::OutputCode, "generated CUDA code:\n{}", unit.source);
    std::vector<KernelCall> calls;
    std::shared_ptr<LoadedLibrary> library;
    std::string built;
    try {
      if (unit.unique_kernels > 0) {
        // 5. NVRTC: a CUBIN for the device's architecture (or --arch); on the CPU, a check that
        // the source the device would get compiles, where NVRTC is installed.
        phase.begin("nvrtc");
        std::string arch = options_.arch;
        if (device.is_cuda()) arch = arch.empty() ? CudaDriver::shared().arch(device.index()) : arch;
        if (arch.empty()) arch = "sm_90";
        std::string why_no_nvrtc;
        std::string cubin;
        KernelLibraryBuilder& builder = own_compiler_ ? *own_compiler_ : cuda_emulation_compiler();
        bool cubin_hit = true;
        if (device.is_cuda() || NvrtcCompiler::available(&why_no_nvrtc)) {
          CachedCubin r = cached_cubin(NvrtcCompiler::shared(), unit.source, arch, builder.cache_dir());
          cubin = std::move(r.cubin);
          cubin_hit = r.cache_hit;
          built = fmt::format("CUBIN for {} ({} bytes, NVRTC {}, {})", arch, cubin.size(), NvrtcCompiler::shared().version(),
                              r.cache_hit ? "from the cache" : fmt::format("compiled in {:.2f} s", r.compile_s));
        } else {
          built = "not compiled for a device: " + why_no_nvrtc;
        }
        if (device.is_cuda()) {
          phase.begin("load");
          report.cache_hit = cubin_hit;
          calls = device_calls(unit, cubin, device, limits);
        } else {
          // 6. Emulation: the same source for the CPU through the system compiler.
          phase.begin("cc");
          KernelLibraryResult lib = builder.compile(emulation_source(unit));
          report.cache_hit = lib.cache_hit && cubin_hit;
          library = lib.library;
          calls = emulated_calls(unit, *library, limits);
          built += "; run on the CPU in emulation (cuda_emulation.h)";
        }
      }
    } catch (const Error& e) {
      phase.end();
      std::string detail = e.what();
      if (const auto* n = dynamic_cast<const NvrtcError*>(&e)) detail += "\n" + n->log();
      if (const auto* k = dynamic_cast<const KernelLibraryError*>(&e)) detail += "\n" + k->output();
      if (strict_ || e.kind() == ErrorKind::Usage) {
        if (e.kind() == ErrorKind::Usage) throw;
        throw Error(ErrorKind::Check, fmt::format("compile_failed (--strict): {}", detail));
      }
      report.compile_failed = true;
      report.failure = detail;
      report.hints.push_back(hint("compile_failed", nullptr, fmt::format("graph runs eagerly: {}", e.what())));
      return eager(captured, profiler, std::move(report));
    }
    phase.end();
    // Only a graph that compiled runs its linears with their epilogues.
    report.kernel_groups.insert(report.kernel_groups.end(), epilogues.begin(), epilogues.end());
    report.kernel_groups.insert(report.kernel_groups.end(), conv_fused.begin(), conv_fused.end());
    // 7. On a GPU, the whole graph replayed as one CUDA graph from its second call.
    std::string replay = "CUDA graphs: off (--cuda-graphs off)";
    std::string why_not;
    const bool writes_outside = writes_outside_graph(g);
    if (!device.is_cuda()) replay = "CUDA graphs: on a GPU only";
    else if (options_.graphs && writes_outside) replay = "CUDA graphs: not used (the graph writes to its inputs or weights, which a replay would not)";
    else if (options_.graphs && cuda_graphs_available(&why_not)) replay = "replayed as a CUDA graph from the second call";
    else if (options_.graphs) replay = "CUDA graphs: not available (" + why_not + ")";
    report.ir = fmt::format("# cuda: {} kernel calls, {} unique kernels, {} ops fused, {} extern, {} fallback; {}; {}\n",
                            report.kernels, report.unique_kernels, report.fused_ops, report.extern_calls,
                            report.fallback_calls, built.empty() ? "no generated kernels" : built, replay) +
                (layout.empty() ? "" : "# " + layout + "\n") + report.ir;
    log_hints(report.hints);
    auto runner = std::make_shared<ProgramRunner>(std::move(g), std::move(program), std::move(library), std::move(calls),
                                                  std::vector<KernelFn>{}, profiler, device);
    GraphRun run = [runner](const std::vector<c10::IValue>& in, int64_t id) { return runner->run(in, id); };
    if (device.is_cuda() && options_.graphs && !writes_outside) run = replay_as_cuda_graph(std::move(run), captured.step_prefix.empty() ? "forward" : captured.step_prefix, profiler);
    return std::make_unique<ReportedGraph>(std::move(run), std::move(report));
  }

 private:
  static std::vector<KernelCall> emulated_calls(const CudaUnit& unit, const LoadedLibrary& library, const LaunchLimits& limits) {
    using EmulateFn = void (*)(const void*, unsigned, unsigned);
    std::vector<KernelCall> calls;
    for (const auto& k : unit.kernels) {
      auto fn = reinterpret_cast<EmulateFn>(library.symbol(k.symbol + "_emulate"));
      calls.emplace_back([fn, k, limits](const void* const* in, void* const* out, const int64_t* sz, const int64_t* st) {
        std::vector<uint64_t> params = pack_params(k, in, out, sz, st);
        if (params.empty()) return false;
        LaunchShape shape = launch_shape(k, sz, limits);
        fn(params.data(), shape.grid, shape.block);
        return true;
      });
    }
    return calls;
  }

  static std::vector<KernelCall> device_calls(const CudaUnit& unit, const std::string& cubin, const c10::Device& device,
                                              const LaunchLimits& limits) {
    std::shared_ptr<CudaModule> module = CudaDriver::shared().load(cubin, device.index());
    std::vector<KernelCall> calls;
    for (const auto& k : unit.kernels) {
      CudaFunction fn = module->function(k.symbol);
      calls.emplace_back([module, fn, k, limits, device](const void* const* in, void* const* out, const int64_t* sz,
                                                         const int64_t* st) {
        void* stream = nullptr;
        if (!compat::current_native_stream(device, &stream)) return false;
        std::vector<uint64_t> params = pack_params(k, in, out, sz, st);
        if (params.empty()) return false;
        LaunchShape shape = launch_shape(k, sz, limits);
        module->launch(fn, shape.grid, shape.block, params.data(), stream);
        return true;
      });
    }
    return calls;
  }

  std::unique_ptr<CompiledGraph> eager(const CapturedGraph& g, CpuProfiler* profiler, CompileReport report) {
    return eager_with_report(g, profiler, std::move(report));
  }

  bool strict_;
  CudaOptions options_;
  std::unique_ptr<KernelLibraryBuilder> own_compiler_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(bool strict, const std::string& cache_dir, const CudaOptions& cuda) {
  return std::make_unique<CudaBackend>(strict, cache_dir, cuda);
}

}  // namespace tcprof
