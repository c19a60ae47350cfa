// The cuda backend: captured graph -> the cpp backend's graph passes, lowering and fusion (the
// device-neutral middle) -> CUDA C++ per graph (codegen_cuda.h) -> NVRTC to a CUBIN -> run. A graph
// on a GPU runs its kernels from the CUBIN through the driver (cuda_driver.h); a graph on the CPU
// (no GPU here, CI) runs the same CUDA source compiled for the CPU under cuda_emulation.h, so that
// every generated kernel is checked against eager without a device. Extern steps (matmuls,
// convolutions, views) are LibTorch calls on the graph's device: cuBLAS and cuDNN on a GPU.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include <ATen/ATen.h>

#include <fmt/format.h>

#include "compiler/backends/backend.h"
#include "compiler/backends/compile_steps.h"
#include "compiler/backends/compile_training.h"
#include "compiler/backends/cpp/lower/lower_ops.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cpp/run/program_runner.h"
#include "compiler/backends/cpp/schedule/schedule_fusion.h"
#include "compiler/backends/cuda/conv_epilogue.h"
#include "compiler/backends/cuda/conv_layout.h"
#include "compiler/backends/cuda/max_pool_first.h"
#include "compiler/backends/cuda/cuda_driver.h"
#include "compiler/backends/cuda/cuda_emulation.h"
#include "compiler/backends/cuda/cuda_graph_replay.h"
#include "compiler/backends/cuda/cuda_launch.h"
#include "compiler/backends/cuda/launch_tuning.h"
#include "compiler/backends/cuda/linear_epilogue.h"
#include "compiler/frontend/guards.h"
#include "compiler/torch_compat.h"
#include "compiler/toolchain/cubin_cache.h"
#include "compiler/toolchain/kernel_library.h"
#include "compiler/toolchain/nvrtc_compiler.h"
#include "core/clock.h"
#include "core/sha256.h"
#include "core/error.h"
#include "core/log.h"

namespace tcprof {
namespace {

// Lines of the IR's header, each "# ...".
std::string header_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "# " + l + "\n";
  return out;
}

// Emulated blocks are fibers meeting at barriers: two warps exercise every step of a
// block reduction (the butterfly and the warps' partials) at a cost the CPU can bear.
LaunchLimits emulation_limits() {
  LaunchLimits l;
  l.pointwise_block = 64;
  l.max_row_block = 64;
  l.max_grid = 8;
  l.column_rows_per_thread = 2;  // a column sum over a few rows splits them, so tests and fuzz run the finish kernel
  if (const char* env = std::getenv("TCPROF_CUDA_EMULATION_BLOCK")) {
    unsigned b = static_cast<unsigned>(std::atoi(env));
    if (b >= 32 && b <= 1024 && b % 32 == 0) l.pointwise_block = l.max_row_block = b;
  }
  return launch_limits_from_env(l);
}

// The emulation tunes its launches only when asked: it is how the tests run the tuner's whole path
// without a GPU. "1" times the CPU's fibers (which says nothing of a GPU); "widest" pretends the
// widest block is fastest, so that the sizes the default never takes run and are checked.
enum class EmulationTuning { Off, Fibers, Widest };
EmulationTuning emulation_tuning() {
  const char* env = std::getenv("TCPROF_CUDA_EMULATION_TUNING");
  if (!env || !*env || std::string(env) == "0") return EmulationTuning::Off;
  if (std::string(env) == "1") return EmulationTuning::Fibers;
  if (std::string(env) == "widest") return EmulationTuning::Widest;
  throw Error(ErrorKind::Usage, fmt::format("TCPROF_CUDA_EMULATION_TUNING: '{}' is not 0, 1 or widest (1 times the emulated launches, widest makes the widest block win; unset it to launch the defaults)", env));
}

// Bit i set where operand i (inputs, then outputs) is 16-byte aligned: a kernel's vector path
// depends on it, so its time does.
uint64_t alignment_bits(const CudaKernelSymbol& k, const void* const* in, void* const* out) {
  uint64_t bits = 0;
  int bit = 0;
  for (int i = 0; i < k.inputs && bit < 64; ++i, ++bit) bits |= (reinterpret_cast<uintptr_t>(in[i]) % 16 == 0 ? 1ull : 0ull) << bit;
  for (int o = 0; o < k.outputs && bit < 64; ++o, ++bit) bits |= (reinterpret_cast<uintptr_t>(out[o]) % 16 == 0 ? 1ull : 0ull) << bit;
  return bits;
}

// One kernel's launch shape, remembered for the index space it last saw: a launch over the same
// sizes, strides and alignment as the one before pays a comparison, not the tuner's hash and lookup.
class LaunchSizer {
 public:
  LaunchSizer(CudaKernelSymbol kernel, LaunchLimits limits, std::shared_ptr<LaunchTuner> tuner)
      : kernel_(std::move(kernel)), limits_(limits), tuner_(std::move(tuner)) {}
  LaunchShape fallback(const int64_t* sizes) const { return launch_shape(kernel_, sizes, limits_); }
  LaunchShape shape(const int64_t* sizes, const int64_t* strides, uint64_t aligned, const LaunchClock& clock) {
    if (!tuner_) return fallback(sizes);
    const size_t n = static_cast<size_t>(kernel_.rank) * static_cast<size_t>(1 + kernel_.inputs);
    std::lock_guard<std::mutex> lock(mu_);
    if (last_.size() == n && aligned == last_aligned_ && std::equal(sizes, sizes + kernel_.rank, last_.begin()) &&
        std::equal(strides, strides + (n - static_cast<size_t>(kernel_.rank)), last_.begin() + kernel_.rank)) {
      return last_shape_;
    }
    const LaunchTuner::Choice choice = tuner_->choose(kernel_, sizes, strides, aligned, limits_, clock);
    if (!choice.decided) return choice.shape;  // asked again next time
    last_shape_ = choice.shape;
    last_aligned_ = aligned;
    last_.assign(sizes, sizes + kernel_.rank);
    last_.insert(last_.end(), strides, strides + (n - static_cast<size_t>(kernel_.rank)));
    return last_shape_;
  }

 private:
  CudaKernelSymbol kernel_;
  LaunchLimits limits_;
  std::shared_ptr<LaunchTuner> tuner_;
  std::mutex mu_;
  std::vector<int64_t> last_;
  uint64_t last_aligned_ = 0;
  LaunchShape last_shape_;
};

// A column kernel's launch: its scratch (where its rows are split) after its outputs, then the
// kernel and, split, its finish kernel, both in the default shape: column kernels are not tuned,
// their shape orders their sums. `launch(params, finish)` runs one of the two.
template <typename Launch>
bool launch_column(const CudaKernelSymbol& k, const void* const* in, void* const* out, const int64_t* sz, const int64_t* st,
                   const LaunchShape& shape, const c10::Device& device, Launch&& launch) {
  const int64_t splits = column_splits(k, sz, shape);
  at::Tensor scratch;
  if (splits > 1) scratch = at::empty({splits * k.column_sums * sz[k.rank - 1]}, at::TensorOptions().dtype(at::kDouble).device(device));
  std::vector<void*> outs(out, out + (k.outputs - 1));
  outs.push_back(scratch.defined() ? scratch.data_ptr() : nullptr);
  std::vector<uint64_t> params = pack_params(k, in, outs.data(), sz, st);
  if (params.empty()) return false;
  launch(static_cast<const void*>(params.data()), false);
  if (splits > 1) launch(static_cast<const void*>(params.data()), true);
  return true;
}

struct DeviceLaunch {
  const CudaModule* module;
  CudaFunction fn;
  const void* params;
  void* stream;
};

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
    if (!device.is_cuda() && !device.is_cpu()) {
      report.hints.push_back(hint("no_gpu_codegen", nullptr, fmt::format("graph on {} runs eagerly through LibTorch", device.str())));
      return eager(captured, profiler, std::move(report));
    }
    std::string why_eager = autograd_reason(captured, inputs);
    const std::string state = module_state_reason(captured);
    if (!why_eager.empty() && state.empty()) {
      // Training: the forward and the backward from the joint graph, each compiled below as an
      // inference graph is, run under autograd (compile_training.h).
      std::string why_not;
      auto inference = [this, profiler](const CapturedGraph& part, const std::vector<c10::IValue>& in) {
        return std::shared_ptr<CompiledGraph>(compile_inference(part, in, profiler, /*training_part=*/true));
      };
      if (auto trained = compile_training(captured, inputs, device.type(), inference, &why_not)) return trained;
      why_eager = eager_training_reason(why_eager, why_not);
    }
    if (!why_eager.empty() || !state.empty()) {
      report.hints.push_back(hint("autograd", nullptr, "graph runs eagerly: " + (state.empty() ? why_eager : state)));
      return eager(captured, profiler, std::move(report));
    }
    return compile_inference(captured, inputs, profiler, /*training_part=*/false);
  }

 private:
  // One inference graph, or one of a training graph's two (`training_part`: those are never
  // replayed as CUDA graphs, because a replay copies its inputs in and its outputs out, and theirs
  // are every parameter and every value the backward saves, each step).
  std::unique_ptr<CompiledGraph> compile_inference(const CapturedGraph& captured, const std::vector<c10::IValue>& inputs,
                                                   CpuProfiler* profiler, bool training_part) {
    CompileReport report;
    const c10::Device device = graph_device(captured, inputs);
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
    const EmulationTuning emulation = device.is_cuda() ? EmulationTuning::Off : emulation_tuning();
    const std::vector<std::string> epilogues = features.linear_epilogues ? fuse_linear_activation(ctx) : std::vector<std::string>{};
    // On a GPU, convolutions in the layout that measures faster; the examples then carry the
    // layouts eager gives every value, which the fused kernels follow.
    std::string layout;  // what was measured, for the IR's header
    const bool channels_last = device.is_cuda() && choose_conv_channels_last(g, inputs, &layout);
    // Opt-in until a GPU measures it: a convolution's ReLU (and residual add) inside cuDNN's call.
    const std::vector<std::string> conv_fused = conv_epilogues ? fuse_conv_relu(ctx) : std::vector<std::string>{};
    const int biases_split = split_conv_bias(ctx);
    // Pools before the bias adds and ReLUs that feed them: those then run on the pooled values.
    const std::vector<std::string> pools_first = max_pool_first(ctx);
    // One run for all of them: every example then holds its value in the graph as it now is.
    if (biases_split > 0 || channels_last || !conv_fused.empty() || !pools_first.empty()) examples = example_run(g, inputs);
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
    std::string built, launches;
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
        // Launch sizes raced on the first launch of each index space, unless they are fixed.
        std::shared_ptr<LaunchTuner> tuner;
        if (!features.launch_tuning) {
          launches = "launch sizes: the defaults (TCPROF_CUDA_OFF=launch-tuning)";
        } else if (std::getenv("TCPROF_CUDA_LAUNCH")) {
          launches = "launch sizes: as TCPROF_CUDA_LAUNCH sets them";
        } else if (device.is_cuda() || emulation != EmulationTuning::Off) {
          const std::string on = device.is_cuda() ? CudaDriver::shared().describe(device.index()) : "the CPU's emulation";
          // What the timings hold for: the GPU and how its CUBIN was made (a kernel's symbol
          // hashes its body, not the prelude it calls).
          const std::string made = device.is_cuda() ? fmt::format("; {} by NVRTC {}; prelude {}", arch, NvrtcCompiler::shared().version(),
                                                                  sha256_hex(cuda_prelude()).substr(0, 16))
                                                    : fmt::format("; {}", emulation == EmulationTuning::Widest ? "widest" : "fibers");
          tuner = launch_tuner(on + made, builder.cache_dir());
          launches = fmt::format("launch sizes: tuned on {} at each kernel's first launch over a new shape (TCPROF_LOGS=autotune)", on);
        } else {
          launches = "launch sizes: the defaults in emulation; on a GPU, tuned at each kernel's first launch over a new shape";
        }
        if (device.is_cuda()) {
          phase.begin("load");
          report.cache_hit = cubin_hit;
          calls = device_calls(unit, cubin, device, limits, tuner);
        } else {
          // 6. Emulation: the same source for the CPU through the system compiler.
          phase.begin("cc");
          KernelLibraryResult lib = builder.compile(emulation_source(unit));
          report.cache_hit = lib.cache_hit && cubin_hit;
          library = lib.library;
          calls = emulated_calls(unit, *library, limits, tuner, emulation == EmulationTuning::Widest);
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
    // A training part says so on the CPU too: what a GPU would do is what explain is read for.
    if (options_.graphs && training_part) replay = "CUDA graphs: not used for training graphs (a replay would copy every parameter in and every saved value out, each step)";
    else if (!device.is_cuda()) replay = "CUDA graphs: on a GPU only";
    else if (options_.graphs && writes_outside) replay = "CUDA graphs: not used (the graph writes to its inputs or weights, which a replay would not)";
    else if (options_.graphs && cuda_graphs_available(&why_not)) replay = "replayed as a CUDA graph from the second call";
    else if (options_.graphs) replay = "CUDA graphs: not available (" + why_not + ")";
    report.ir = fmt::format("# cuda: {} kernel calls, {} unique kernels, {} ops fused, {} extern, {} fallback; {}; {}\n",
                            report.kernels, report.unique_kernels, report.fused_ops, report.extern_calls,
                            report.fallback_calls, built.empty() ? "no generated kernels" : built, replay) +
                (launches.empty() ? "" : "# " + launches + "\n") + (layout.empty() ? "" : "# " + layout + "\n") + header_lines(pools_first) + report.ir;
    log_hints(report.hints);
    auto runner = std::make_shared<ProgramRunner>(std::move(g), std::move(program), std::move(library), std::move(calls),
                                                  std::vector<KernelFn>{}, profiler, device);
    GraphRun run = [runner](const std::vector<c10::IValue>& in, int64_t id) { return runner->run(in, id); };
    if (device.is_cuda() && options_.graphs && !writes_outside && !training_part) run = replay_as_cuda_graph(std::move(run), captured.step_prefix.empty() ? "forward" : captured.step_prefix, profiler);
    return std::make_unique<ReportedGraph>(std::move(run), std::move(report));
  }

  static std::vector<KernelCall> emulated_calls(const CudaUnit& unit, const LoadedLibrary& library, const LaunchLimits& limits,
                                                const std::shared_ptr<LaunchTuner>& tuner, bool widest_fastest) {
    using EmulateFn = void (*)(const void*, unsigned, unsigned);
    std::vector<KernelCall> calls;
    for (const auto& k : unit.kernels) {
      auto fn = reinterpret_cast<EmulateFn>(library.symbol(k.symbol + "_emulate"));
      auto sizer = std::make_shared<LaunchSizer>(k, limits, tuner);
      if (k.column) {
        auto finish = reinterpret_cast<EmulateFn>(library.symbol(k.finish_symbol + "_emulate"));
        calls.emplace_back([fn, finish, k, sizer](const void* const* in, void* const* out, const int64_t* sz, const int64_t* st) {
          const LaunchShape shape = sizer->fallback(sz);
          return launch_column(k, in, out, sz, st, shape, c10::Device(c10::kCPU), [&](const void* p, bool second) {
            (second ? finish : fn)(p, shape.grid, shape.block);
          });
        });
        continue;
      }
      calls.emplace_back([fn, k, sizer, widest_fastest](const void* const* in, void* const* out, const int64_t* sz, const int64_t* st) {
        std::vector<uint64_t> params = pack_params(k, in, out, sz, st);
        if (params.empty()) return false;
        // Outputs never alias inputs (the runner allocates them), so a timed launch repeats one.
        const uint64_t* p = params.data();
        const LaunchClock clock{[] { return true; }, [fn, p, widest_fastest](const LaunchShape& s, int n) -> std::optional<int64_t> {
                                  const int64_t t0 = now_ns();
                                  for (int i = 0; i < n; ++i) fn(p, s.grid, s.block);
                                  return widest_fastest ? n * (int64_t{1} << 20) / s.block : now_ns() - t0;
                                }};
        const LaunchShape shape = sizer->shape(sz, st, alignment_bits(k, in, out), clock);
        fn(params.data(), shape.grid, shape.block);
        return true;
      });
    }
    return calls;
  }

  static std::vector<KernelCall> device_calls(const CudaUnit& unit, const std::string& cubin, const c10::Device& device,
                                              const LaunchLimits& limits, const std::shared_ptr<LaunchTuner>& tuner) {
    std::shared_ptr<CudaModule> module = CudaDriver::shared().load(cubin, device.index());
    std::vector<KernelCall> calls;
    for (const auto& k : unit.kernels) {
      CudaFunction fn = module->function(k.symbol);
      auto sizer = std::make_shared<LaunchSizer>(k, limits, tuner);
      if (k.column) {
        CudaFunction finish = module->function(k.finish_symbol);
        calls.emplace_back([module, fn, finish, k, sizer, device](const void* const* in, void* const* out, const int64_t* sz,
                                                                  const int64_t* st) {
          void* stream = nullptr;
          if (!compat::current_native_stream(device, &stream)) return false;
          const LaunchShape shape = sizer->fallback(sz);
          return launch_column(k, in, out, sz, st, shape, device, [&](const void* p, bool second) {
            module->launch(second ? finish : fn, shape.grid, shape.block, p, stream);
          });
        });
        continue;
      }
      calls.emplace_back([module, fn, k, sizer, device](const void* const* in, void* const* out, const int64_t* sz,
                                                        const int64_t* st) {
        void* stream = nullptr;
        if (!compat::current_native_stream(device, &stream)) return false;
        std::vector<uint64_t> params = pack_params(k, in, out, sz, st);
        if (params.empty()) return false;
        // One pointer each, so that building the clock allocates nothing on a launch that needs none.
        const DeviceLaunch launch{module.get(), fn, params.data(), stream};
        const LaunchClock clock{[&launch] { return launch.module->can_time(launch.stream); },
                                [&launch](const LaunchShape& s, int n) {
                                  return launch.module->time_launches(launch.fn, s.grid, s.block, launch.params, launch.stream, n);
                                }};
        const LaunchShape shape = sizer->shape(sz, st, alignment_bits(k, in, out), clock);
        try {
          module->launch(fn, shape.grid, shape.block, params.data(), stream);
        } catch (const Error&) {
          // A tuned size refused now (another build's registers under the same key): the default.
          const LaunchShape fallback = sizer->fallback(sz);
          if (fallback == shape) throw;
          module->launch(fn, fallback.grid, fallback.block, params.data(), stream);
        }
        return true;
      });
    }
    return calls;
  }

  // One tuner per device and cache folder for the backend's life: a kernel two graphs share is
  // timed once.
  std::shared_ptr<LaunchTuner> launch_tuner(const std::string& device, const std::string& cache_dir) {
    std::lock_guard<std::mutex> lock(tuners_mu_);
    std::shared_ptr<LaunchTuner>& t = tuners_[device + "\n" + cache_dir];
    if (!t) t = std::make_shared<LaunchTuner>(device, cache_dir);
    return t;
  }

  std::unique_ptr<CompiledGraph> eager(const CapturedGraph& g, CpuProfiler* profiler, CompileReport report) {
    return eager_with_report(g, profiler, std::move(report));
  }

  bool strict_;
  CudaOptions options_;
  std::unique_ptr<KernelLibraryBuilder> own_compiler_;
  std::mutex tuners_mu_;
  std::map<std::string, std::shared_ptr<LaunchTuner>> tuners_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(bool strict, const std::string& cache_dir, const CudaOptions& cuda) {
  return std::make_unique<CudaBackend>(strict, cache_dir, cuda);
}

}  // namespace tcprof
