// The cpp backend: captured graph -> graph passes -> loop IR -> fused C++ kernels -> shared
// library. compile() below reads as the list of steps; each step is one file. With
// TCPROF_LOGS=passes the IR is printed after every step, with output_code the generated source.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <fmt/format.h>

#include "compiler/backends/backend.h"
#include "compiler/backends/compile_steps.h"
#include "compiler/backends/compile_training.h"
#include "compiler/torch_compat.h"
#include "compiler/backends/cpp/codegen/codegen_cpp.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/frontend/guards.h"
#include "compiler/backends/cpp/lower/lower_ops.h"
#include "compiler/toolchain/kernel_library.h"
#include "compiler/backends/cpp/run/program_runner.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "compiler/backends/cpp/run/onednn_gemm.h"
#include "compiler/backends/cpp/schedule/plan_onednn_layout.h"
#include "compiler/backends/cpp/schedule/schedule_fusion.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"

namespace tcprof {
namespace {

// Whether a program runs GEMMs that oneDNN may take: linears against prepared weights (attention's
// projections among them) and products of graph values.
bool uses_onednn_gemm(const LoopProgram& program) {
  return std::any_of(program.window_kernels.begin(), program.window_kernels.end(), [](const WindowKernel& k) {
    return k.kind == WindowKernel::Kind::LinearGemm || k.kind == WindowKernel::Kind::Attention ||
           k.kind == WindowKernel::Kind::Gemm;
  });
}

class CppBackend : public Backend {
 public:
  CppBackend(bool strict, const std::string& cache_dir) : strict_(strict) {
    if (!cache_dir.empty()) {
      KernelLibraryOptions o;
      o.cache_dir = cache_dir;
      own_compiler_ = std::make_unique<KernelLibraryBuilder>(o);
    }
  }
  std::string name() const override { return "cpp"; }

  std::unique_ptr<CompiledGraph> compile(const CapturedGraph& captured, const std::vector<c10::IValue>& inputs,
                                         CpuProfiler* profiler) override {
    CompileReport report;
    // 0. Device: this backend writes CPU code; a graph elsewhere runs through LibTorch.
    const c10::Device device = graph_device(captured, inputs);
    if (!generates_code_for(device)) {
      report.hints.push_back(hint("no_gpu_codegen", nullptr,
                                  fmt::format("graph on {} runs eagerly through LibTorch: the cpp backend "
                                              "generates CPU code only", device.str())));
      return eager(captured, profiler, std::move(report));
    }
    std::string why_eager = autograd_reason(captured, inputs);
    std::string state = module_state_reason(captured);
    if (!why_eager.empty() && state.empty()) {
      // Training: forward and backward compiled from the joint graph, run under autograd.
      std::string why_not;
      auto inference = [this, profiler](const CapturedGraph& part, const std::vector<c10::IValue>& in) {
        return std::shared_ptr<CompiledGraph>(compile(part, in, profiler));
      };
      if (auto trained = compile_training(captured, inputs, c10::DeviceType::CPU, inference, &why_not)) return trained;
      why_eager = eager_training_reason(why_eager, why_not);
    }
    if (!why_eager.empty() || !state.empty()) {
      report.hints.push_back(hint("autograd", nullptr, "graph runs eagerly: " + (state.empty() ? why_eager : state)));
      return eager(captured, profiler, std::move(report));
    }
    Phases phase(report);
    // 1. Decompose: learn every value's shape and layout, then simplify the graph.
    phase.begin("decompose");
    CapturedGraph g = captured;
    std::vector<c10::IValue> examples = example_run(g, inputs);
    g.capture_values.reset();  // the runner keeps this graph: not the capture's intermediates
    InputBindings bindings(inputs);
    PassContext ctx{g, examples, bindings};
    run_inference_passes(ctx);
    // 2. Lower: decide per op (kernel expression, extern call or fallback).
    phase.begin("lower");
    LowerContext lower{examples, bindings};
    std::vector<OpLowering> lowerings = lower_graph_ops(g, lower);
    // 3. Schedule: fuse into kernels, place extern calls.
    phase.begin("schedule");
    ScheduledProgram program = schedule_graph(g, lower, lowerings);
    report.ir = program_ir(g, program);
    if (log_enabled(LogChannel::Passes)) log(LogChannel::Passes, "loop program:\n{}", report.ir);
    summarize(g, program, report);
    // 4. Codegen: one translation unit; identical kernels once.
    phase.begin("codegen");
    GeneratedUnit unit = generate_unit(program.program);
    report.code = unit.source;
    report.unique_kernels = unit.unique_kernels;
    if (log_enabled(LogChannel::OutputCode)) log(LogChannel::OutputCode, "generated code:\n{}", unit.source);
    // 5. cc + load: the system compiler through the content-addressed cache, then dlopen.
    phase.begin("cc");
    std::vector<KernelCall> kernel_calls;
    std::vector<KernelFn> window_fns;
    std::shared_ptr<LoadedLibrary> library;
    try {
      if (unit.unique_kernels > 0) {
        KernelLibraryResult built = (own_compiler_ ? *own_compiler_ : KernelLibraryBuilder::shared()).compile(unit.source);
        phase.begin("load");
        report.cache_hit = built.cache_hit;
        library = built.library;
        for (const auto& s : unit.kernel_symbols) {
          auto fn = reinterpret_cast<KernelFn>(library->symbol(s));
          kernel_calls.emplace_back([fn](const void* const* in, void* const* out, const int64_t* sz, const int64_t* st) {
            fn(in, out, sz, st);
            return true;
          });
        }
        for (const auto& s : unit.window_symbols) {
          window_fns.push_back(s.empty() ? nullptr : reinterpret_cast<KernelFn>(library->symbol(s)));
        }
      }
    } catch (const KernelLibraryError& e) {
      phase.end();
      if (strict_) {
        throw Error(ErrorKind::Check, fmt::format("compile_failed (--strict): {}\n{}", e.what(), e.output()));
      }
      report.compile_failed = true;
      report.failure = fmt::format("{}\n{}", e.what(), e.output());
      report.hints.push_back(hint("compile_failed", nullptr, fmt::format("graph runs eagerly: {}", e.what())));
      return eager(captured, profiler, std::move(report));
    }
    phase.end();
    report.ir = fmt::format("# cpp: {} kernel calls, {} unique kernels (regional compilation shares identical ones), "
                            "{} ops fused, {} extern, {} fallback; compiled library {}\n",
                            report.kernels + report.window_kernels, report.unique_kernels, report.fused_ops,
                            report.extern_calls, report.fallback_calls,
                            report.cache_hit ? "from the cache" : "built now") + report.ir;
    log_hints(report.hints);
    auto runner = std::make_unique<ProgramRunner>(std::move(g), std::move(program), std::move(library),
                                                  std::move(kernel_calls), std::move(window_fns), profiler);
    // 6. Autotune: a replaced op keeps its LibTorch kernel where that is faster on this machine.
    phase.begin("autotune");
    if (uses_onednn_gemm(runner->program().program)) warm_onednn_gemm();
    std::string tuned = autotune(*runner, unit.source, examples, bindings, &report.autotune);
    std::string chain = autotune_chain(*runner, examples, &report.autotune);
    phase.end();
    if (!tuned.empty()) report.ir += tuned;
    if (!chain.empty()) {
      report.ir += chain;
      report.layout = layout_report(runner->graph(), runner->program().program.onednn_convs,
                                    runner->program().program.channel_ops, runner->program().onednn);
    }
    std::shared_ptr<ProgramRunner> shared_runner = std::move(runner);
    return std::make_unique<ReportedGraph>(
        [shared_runner](const std::vector<c10::IValue>& in, int64_t id) { return shared_runner->run(in, id); },
        std::move(report));
  }

 private:
  // Timed once per machine, thread count and LibTorch: later compiles of the same graph read the
  // decisions from the autotune cache. Returns the IR record's autotune section.
  // Decisions keyed by `material` and everything else a timing depends on (compiler flags, thread
  // count, LibTorch): read from the autotune cache, or measured now and stored. `cached` says which.
  std::vector<AutotuneChoice> cached_or_measured(const std::string& material, size_t count,
                                                 const std::function<std::vector<AutotuneChoice>()>& measure, bool* cached) {
    KernelLibraryBuilder& builder = own_compiler_ ? *own_compiler_ : KernelLibraryBuilder::shared();
    std::string key = autotune_key(fmt::format("{}\nflags {}\nthreads {}\ntorch {}\n", material, fmt::join(builder.flags(), " "),
                                               at::get_num_threads(), TORCH_VERSION));
    std::optional<std::vector<AutotuneChoice>> choices = load_autotune(builder.cache_dir(), key, count);
    *cached = choices.has_value();
    if (!*cached) {
      choices = measure();
      store_autotune(builder.cache_dir(), key, *choices);
    }
    return *choices;
  }

  static std::string ir_lines(const std::vector<AutotuneDecision>& decisions) {
    std::string out;
    for (const auto& d : decisions) out += (out.empty() ? "  " : "\n  ") + d.text;
    return out;
  }

  // Changed whenever measure_autotune measures differently: decisions taken the old way are stale.
  static constexpr const char* kAutotuneMethod =
      "direct kernels: race of 5 rounds in turns after 1, outputs released, GEMM methods in the race, GEMMs of graph values";

  // The IR record's autotune section; the decisions go to `decisions` too (CompileReport::autotune).
  std::string autotune(ProgramRunner& runner, const std::string& source, const std::vector<c10::IValue>& examples,
                       const SymBindings& bindings, std::vector<AutotuneDecision>* decisions) {
    if (runner.direct_kernels() == 0) return "";
    // TCPROF_AUTOTUNE=kernels: every direct kernel over LibTorch's op, untimed, so that a
    // differential test (fuzz_graphs) checks the kernels whatever this machine's timings.
    const char* forced = std::getenv("TCPROF_AUTOTUNE");
    if (forced != nullptr && std::string(forced) == "kernels") {
      std::vector<AutotuneChoice> all(runner.direct_kernels(), AutotuneChoice{true, 0, 0, false});
      std::vector<AutotuneDecision> lines = runner.use_autotune(all);
      decisions->insert(decisions->end(), lines.begin(), lines.end());
      return fmt::format("\nautotune (TCPROF_AUTOTUNE=kernels, untimed):\n{}\n", ir_lines(lines));
    }
    bool cached = false;
    std::vector<AutotuneChoice> choices =
        cached_or_measured(fmt::format("{}\n{}\n{}", kAutotuneMethod, runner.autotune_signature(), source), runner.direct_kernels(),
                           [&] { return runner.measure_autotune(examples, bindings); }, &cached);
    std::vector<AutotuneDecision> lines = runner.use_autotune(choices);
    if (lines.empty()) return "";
    decisions->insert(decisions->end(), lines.begin(), lines.end());
    return fmt::format("\nautotune (5 rounds in turns after a warm-up, on the example inputs{}):\n{}\n",
                       cached ? ", read from the autotune cache" : "", ir_lines(lines));
  }

  // The layout the oneDNN chains run in (ChainFormat), timed once per machine, thread count,
  // oneDNN and LibTorch over whole runs of the graph, read from the autotune cache after that. Only
  // where 4+ values pass between chain steps in the chain's layout: elsewhere the choice saves
  // little and the runs cost (ViT: one convolution in a 0.4 s graph; ConvNeXt-T: 22 convolutions
  // whose values are dense channels-last between them but for 3, 2.5 s of a cold compile for
  // layouts within 3% of each other). Returns the IR record's line.
  std::string autotune_chain(ProgramRunner& runner, const std::vector<c10::IValue>& examples,
                             std::vector<AutotuneDecision>* decisions) {
    if (runner.program().program.onednn_convs.empty()) return "";
    // TCPROF_CHAIN_FORMAT=any|nChw16c|nChw8c: one layout, untimed (tests run each through eager).
    if (const char* forced = std::getenv("TCPROF_CHAIN_FORMAT")) {
      std::vector<AutotuneChoice> only(kChainFormats);
      for (int f = 0; f < kChainFormats; ++f) {
        bool chosen = std::string(forced) == chain_format_name(static_cast<ChainFormat>(f)) ||
                      (f == 0 && std::string(forced) == "any");
        only[static_cast<size_t>(f)] = {chosen, chosen ? 1 : 0, 0, false};
      }
      AutotuneDecision d = runner.use_chain_format(only, false);
      d.text += " (TCPROF_CHAIN_FORMAT)";
      decisions->push_back(d);
      return "\n  " + d.text + "\n";
    }
    if (blocked_handoffs(runner.program().program) < 4) return "";
    bool cached = false;
    std::vector<AutotuneChoice> choices = cached_or_measured(
        fmt::format("chain layout, raced\n{}\nonednn {}", runner.chain_signature(), onednn_version()), kChainFormats,
        [&] {
          std::vector<c10::IValue> inputs(examples.begin(), examples.begin() + static_cast<long>(runner.graph().inputs.size()));
          return runner.measure_chain_formats(inputs);
        },
        &cached);
    AutotuneDecision d = runner.use_chain_format(choices, cached);
    decisions->push_back(d);
    return "\n  " + d.text + "\n";
  }

  // Values chain steps read in the chain's own layout: a convolution's blocked input or residual,
  // each input of a cat or max pool.
  static int blocked_handoffs(const LoopProgram& p) {
    int n = 0;
    for (const OnednnConv& c : p.onednn_convs) {
      n += (c.input_layout == ValueLayout::Blocked) + (c.residual_slot >= 0 && c.residual_layout == ValueLayout::Blocked);
    }
    for (const ChainChannelOp& k : p.channel_ops) n += static_cast<int>(k.input_slots.size());
    return n;
  }

  std::unique_ptr<CompiledGraph> eager(const CapturedGraph& g, CpuProfiler* profiler, CompileReport report) {
    return eager_with_report(g, profiler, std::move(report));
  }

  bool strict_;
  std::unique_ptr<KernelLibraryBuilder> own_compiler_;
};

}  // namespace

std::unique_ptr<Backend> make_cpp_backend(bool strict, const std::string& cache_dir) {
  return std::make_unique<CppBackend>(strict, cache_dir);
}

}  // namespace tcprof
