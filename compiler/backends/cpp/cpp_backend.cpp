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
#include <ATen/core/grad_mode.h>

#include <fmt/format.h>

#include "compiler/autodiff/autograd_graph.h"
#include "compiler/autodiff/joint_graph.h"
#include "compiler/backends/backend.h"
#include "compiler/runtime/autocast.h"
#include "compiler/torch_compat.h"
#include "compiler/backends/cpp/codegen/codegen_cpp.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/frontend/guards.h"
#include "compiler/backends/cpp/lower/lower_ops.h"
#include "compiler/toolchain/kernel_library.h"
#include "compiler/backends/cpp/run/program_runner.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "compiler/backends/cpp/schedule/plan_onednn_layout.h"
#include "compiler/backends/cpp/schedule/schedule_fusion.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"

namespace tcprof {
namespace {

class Phases {
 public:
  explicit Phases(CompileReport& r) : r_(r) {}
  void begin(const char* name) {
    end();
    r_.phases.push_back({name, now_ns(), 0});
    open_ = true;
  }
  void end() {
    if (open_) r_.phases.back().duration_ns = now_ns() - r_.phases.back().start_ns;
    open_ = false;
  }

 private:
  CompileReport& r_;
  bool open_ = false;
};

void log_graph(const char* step, const CapturedGraph& g, int changed) {
  if (log_enabled(LogChannel::Passes)) log(LogChannel::Passes, "after {} ({} changes):\n{}", step, changed, g.ir());
}

// Every slot's value for the example inputs: the capture run's, when the frontend kept them, else
// one run of the graph (inputs cloned and the random generator restored, so that the run changes
// nothing the user can see).
std::vector<c10::IValue> example_run(const CapturedGraph& g, const std::vector<c10::IValue>& inputs) {
  if (g.capture_values && static_cast<int>(g.capture_values->size()) == g.num_slots) return *g.capture_values;
  std::vector<c10::IValue> slots(static_cast<size_t>(g.num_slots));
  for (size_t i = 0; i < inputs.size(); ++i) {
    slots[i] = inputs[i].isTensor() ? c10::IValue(inputs[i].toTensor().clone()) : inputs[i];
  }
  InputBindings bindings(inputs);
  auto gen = at::detail::getDefaultCPUGenerator();
  at::Tensor rng = gen.get_state();
  torch::jit::Stack stack;
  for (const auto& op : g.ops) {
    stack.clear();
    for (const Arg& a : op.args) stack.push_back(evaluate_arg(a, slots, bindings));
    run_op(op, stack);
    for (size_t o = 0; o < op.outputs.size(); ++o) slots[static_cast<size_t>(op.outputs[o])] = std::move(stack[o]);
  }
  gen.set_state(rng);
  return slots;
}

// Why the graph needs autograd (an input or a parameter requires grad under grad mode), or empty.
std::string autograd_reason(const CapturedGraph& g, const std::vector<c10::IValue>& inputs) {
  if (!at::GradMode::is_enabled()) return "";
  for (const auto& v : inputs) {
    if (v.isTensor() && v.toTensor().requires_grad()) return "an input requires grad";
  }
  for (const auto& op : g.ops) {
    for (const auto& a : op.args) {
      if (a.kind == Arg::Kind::Constant && a.constant.isTensor() && a.constant.toTensor().requires_grad()) {
        return "parameters require grad";
      }
    }
  }
  return "";
}

// Why the graph must run op by op through LibTorch (it updates module state), or empty.
std::string module_state_reason(const CapturedGraph& g) {
  for (const auto& op : g.ops) {
    bool mutates_constant = !op.name.empty() && op.name.back() == '_' && !op.args.empty() &&
                            op.args[0].kind == Arg::Kind::Constant;
    bool training_bn = op.name == "aten::batch_norm" && op.args.size() > 5 && op.args[5].kind == Arg::Kind::Constant &&
                       op.args[5].constant.isBool() && op.args[5].constant.toBool();
    if (mutates_constant || training_bn) return fmt::format("{} updates module state", op.name);
  }
  return "";
}

std::string program_ir(const CapturedGraph& g, const ScheduledProgram& s) {
  std::string out = g.ir() + "\nsteps:\n";
  for (const auto& step : s.program.steps) {
    switch (step.kind) {
      case Step::Kind::Extern: {
        const GraphOp& op = g.ops[static_cast<size_t>(step.index)];
        out += fmt::format("  extern {} -> %{}\n", op.name, op.outputs.empty() ? -1 : op.outputs[0]);
        break;
      }
      case Step::Kind::Kernel: {
        const Kernel& k = s.program.kernels[static_cast<size_t>(step.index)];
        out += fmt::format("  kernel {}\n", k.name);
        break;
      }
      case Step::Kind::Window: out += fmt::format("  kernel {}\n", s.program.window_kernels[static_cast<size_t>(step.index)].name); break;
      case Step::Kind::Onednn: {
        const OnednnConv& c = s.program.onednn_convs[static_cast<size_t>(step.index)];
        const OnednnConvolution& p = *s.onednn[static_cast<size_t>(step.index)];
        std::vector<std::string> ops{g.ops[static_cast<size_t>(c.op)].name};
        for (int op : c.post_ops) ops.push_back(g.ops[static_cast<size_t>(op)].name);
        std::string residual = c.residual_slot < 0 ? ""
                               : fmt::format(" + %{} {}{}", c.residual_slot, value_layout_name(c.residual_layout),
                                             c.residual_in_place ? " (written over)" : "");
        out += fmt::format("  onednn {} [{}]: %{} {} ({}){} -> %{} {} ({})\n", c.name, fmt::join(ops, ", "), c.input_slot,
                           value_layout_name(c.input_layout), p.input_format(), residual, c.output_slot,
                           value_layout_name(c.output_layout), p.output_format());
        break;
      }
    }
  }
  out += "\nkernels:\n";
  for (const auto& k : s.program.kernels) out += to_string(k);
  return out;
}

// A compiled graph with the cpp backend's report: generated kernels, or the eager backend's graph
// when it could not be compiled (the report says why).
class ReportedGraph : public CompiledGraph {
 public:
  using Runner = std::function<std::vector<c10::IValue>(const std::vector<c10::IValue>&, int64_t)>;
  ReportedGraph(Runner run, CompileReport report) : run_(std::move(run)) { report_ = std::move(report); }
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id) override {
    return run_(inputs, graph_id);
  }

 private:
  Runner run_;
};

// TCPROF_LOGS=perf_hints: each distinct hint of a graph once, with the user line of its first op
// and how many ops share it (a transformer's blocks repeat the same fallback op).
void log_hints(const std::vector<PerfHint>& hints) {
  if (!log_enabled(LogChannel::PerfHints)) return;
  std::vector<std::pair<const PerfHint*, int>> distinct;
  for (const auto& h : hints) {
    auto same = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) {
      return d.first->kind == h.kind && d.first->message == h.message;
    });
    if (same != distinct.end()) ++same->second;
    else distinct.emplace_back(&h, 1);
  }
  for (const auto& [h, count] : distinct) {
    std::string where = h->loc.known() ? fmt::format(" at {}:{}", h->loc.file, h->loc.line) : "";
    std::string times = count > 1 ? fmt::format(" ({} ops in this graph)", count) : "";
    log(LogChannel::PerfHints, "perf hint ({}): {}{}{}", h->kind, h->message, where, times);
  }
}

PerfHint hint(std::string kind, const GraphOp* op, std::string message) {
  PerfHint h;
  h.kind = std::move(kind);
  h.message = std::move(message);
  if (op) {
    h.op = op->name;
    h.loc = op->loc;
  }
  return h;
}

// One report for a training graph: the joint and partition phases, then the forward's phases and
// the backward's (named backward_codegen, backward_cc, ...), kernels and hints of both.
void merge_training_reports(CompileReport& r, const TrainingGraphs& plan, const CompileReport& fwd, const CompileReport& bwd) {
  for (const auto& p : fwd.phases) r.phases.push_back(p);
  for (auto p : bwd.phases) {
    p.name = "backward_" + p.name;
    r.phases.push_back(p);
  }
  r.ir = plan.summary() + "# forward\n" + fwd.ir + "\n# backward\n" + bwd.ir;
  r.code = fwd.code + bwd.code;
  for (const auto* part : {&fwd, &bwd}) {
    for (const auto& h : part->hints) r.hints.push_back(h);
    r.kernels += part->kernels;
    r.unique_kernels += part->unique_kernels;
    r.window_kernels += part->window_kernels;
    r.fused_ops += part->fused_ops;
    r.extern_calls += part->extern_calls;
    r.fallback_calls += part->fallback_calls;
    for (const auto& k : part->kernel_groups) r.kernel_groups.push_back((part == &bwd ? "bwd " : "") + k);
    for (auto d : part->autotune) {
      if (part == &bwd) d.text = "bwd " + d.text;
      r.autotune.push_back(std::move(d));
    }
  }
  r.cache_hit = fwd.cache_hit && bwd.cache_hit;
  r.compile_failed = fwd.compile_failed || bwd.compile_failed;
  r.failure = fwd.failure + bwd.failure;
  TrainingReport t;
  t.saved_bytes = plan.saved_bytes;
  t.saved_activations = plan.saved_activations();
  t.saved_inputs = static_cast<int>(plan.saved_inputs.size()) - t.saved_activations;
  t.recomputed = plan.recomputed;
  t.backward_ops = static_cast<int>(plan.backward.ops.size());
  t.gradients = static_cast<int>(plan.grad_inputs.size());
  t.forward_kernels = fwd.kernels + fwd.window_kernels;
  t.backward_kernels = bwd.kernels + bwd.window_kernels;
  r.training = t;
  r.parts.push_back({"aot_forward", static_cast<int>(plan.forward.op_count()), fwd.ir, fwd.compile_failed ? fwd.failure : fwd.code});
  r.parts.push_back({"aot_backward", static_cast<int>(plan.backward.op_count()), bwd.ir, bwd.compile_failed ? bwd.failure : bwd.code});
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
      if (auto trained = compile_training(captured, inputs, profiler, &why_not)) return trained;
      why_eager = fmt::format("{} and the compiled backward does not cover it: {}",
                              why_eager == "an input requires grad" ? "an input requires grad" : "training", why_not);
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
    log_graph("simplify", g, simplify_graph(ctx));
    log_graph("functionalize", g, functionalize_inplace(ctx));
    log_graph("fold_constants", g, fold_constants(ctx));
    log_graph("fold_batch_norm", g, fold_batch_norm(ctx));
    log_graph("simplify", g, simplify_graph(ctx));
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
    std::vector<KernelFn> kernel_fns, window_fns;
    std::shared_ptr<LoadedLibrary> library;
    try {
      if (unit.unique_kernels > 0) {
        KernelLibraryResult built = (own_compiler_ ? *own_compiler_ : KernelLibraryBuilder::shared()).compile(unit.source);
        phase.begin("load");
        report.cache_hit = built.cache_hit;
        library = built.library;
        for (const auto& s : unit.kernel_symbols) kernel_fns.push_back(reinterpret_cast<KernelFn>(library->symbol(s)));
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
                                                  std::move(kernel_fns), std::move(window_fns), profiler);
    // 6. Autotune: a replaced op keeps its LibTorch kernel where that is faster on this machine.
    phase.begin("autotune");
    std::string tuned = autotune(*runner, unit.source, examples, bindings, &report.autotune);
    std::string chain = autotune_chain(*runner, examples, &report.autotune);
    phase.end();
    if (!tuned.empty()) report.ir += tuned;
    if (!chain.empty()) {
      report.ir += chain;
      report.layout = layout_report(runner->graph(), runner->program().program.onednn_convs, runner->program().onednn);
    }
    std::shared_ptr<ProgramRunner> shared_runner = std::move(runner);
    return std::make_unique<ReportedGraph>(
        [shared_runner](const std::vector<c10::IValue>& in, int64_t id) { return shared_runner->run(in, id); },
        std::move(report));
  }

 private:
  // The training graphs of a graph that needs autograd (compiler/autodiff): parameters lifted to
  // inputs, the simplifying passes, the joint graph and its partition; then the forward and the
  // backward graph each compiled as an inference graph is. Null, with the reason, when an op has
  // no derivative rule or the graph is outside what the joint graph handles.
  std::unique_ptr<CompiledGraph> compile_training(const CapturedGraph& captured, const std::vector<c10::IValue>& inputs,
                                                  CpuProfiler* profiler, std::string* why_not) {
    if (autocast_enabled(c10::DeviceType::CPU)) {
      *why_not = "autocast is on (mixed-precision training runs eagerly)";
      return nullptr;
    }
    CompileReport report;
    Phases phase(report);
    phase.begin("joint");
    std::vector<at::Tensor> parameters;
    CapturedGraph g = lift_parameters(captured, &parameters);
    g.capture_values.reset();  // parameters became inputs: other slot numbers
    std::vector<c10::IValue> all = inputs;
    std::vector<bool> differentiable;
    for (const auto& v : inputs) {
      differentiable.push_back(v.isTensor() && v.toTensor().requires_grad() && v.toTensor().is_floating_point());
    }
    for (const auto& p : parameters) {
      all.emplace_back(p);
      differentiable.push_back(p.is_floating_point());
    }
    at::NoGradGuard no_grad;  // from here on nothing is recorded; the compiled graphs run without autograd
    std::vector<c10::IValue> examples = example_run(g, all);
    InputBindings bindings(all);
    PassContext ctx{g, examples, bindings};
    simplify_graph(ctx);
    functionalize_inplace(ctx);
    std::optional<JointGraph> joint = build_joint_graph(g, examples, differentiable, why_not);
    if (!joint) return nullptr;
    phase.begin("partition");
    TrainingGraphs plan = partition_joint_graph(std::move(*joint), examples);
    phase.end();
    std::shared_ptr<CompiledGraph> forward = compile(plan.forward, all, profiler);
    std::shared_ptr<CompiledGraph> backward = compile(plan.backward, plan.backward_examples, profiler);
    merge_training_reports(report, plan, forward->report(), backward->report());
    return make_autograd_graph(std::move(plan), std::move(parameters), std::move(forward), std::move(backward),
                               std::move(report));
  }

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
  static constexpr const char* kAutotuneMethod = "direct kernels: race of 5 rounds in turns after 1, outputs released";

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
  // for chains of 4+ convolutions: elsewhere the choice saves little and the runs cost (ViT: one
  // convolution in a 0.4 s graph). Returns the IR record's line.
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
    if (runner.program().program.onednn_convs.size() < 4) return "";
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

  std::unique_ptr<CompiledGraph> eager(const CapturedGraph& g, CpuProfiler* profiler, CompileReport report) {
    log_hints(report.hints);
    report.ir = g.ir();
    report.extern_calls = static_cast<int>(g.ops.size());
    std::shared_ptr<CompiledGraph> graph = make_eager_backend()->compile(g, {}, profiler);
    return std::make_unique<ReportedGraph>(
        [graph](const std::vector<c10::IValue>& in, int64_t id) { return graph->run(in, id); }, std::move(report));
  }

  static void summarize(const CapturedGraph& g, const ScheduledProgram& s, CompileReport& report) {
    report.kernels = static_cast<int>(s.program.kernels.size());
    report.window_kernels = static_cast<int>(s.program.window_kernels.size());
    for (const auto& k : s.program.kernels) {
      report.fused_ops += static_cast<int>(k.ops.size());
      report.kernel_groups.push_back(fmt::format("{}: {}", k.name, fmt::join(k.op_names, ", ")));
    }
    for (const auto& k : s.program.window_kernels) {
      std::vector<std::string> ops;
      for (int op : covered_ops(k)) ops.push_back(g.ops[static_cast<size_t>(op)].name);
      report.kernel_groups.push_back(fmt::format("{}: {}", k.name, fmt::join(ops, ", ")));
      if (k.generated()) {
        report.fused_ops += static_cast<int>(ops.size());
      } else {  // a BLAS / oneDNN call: extern, not a generated kernel
        --report.window_kernels;
        ++report.extern_calls;
      }
    }
    for (const auto& c : s.program.onednn_convs) {
      std::vector<std::string> ops{g.ops[static_cast<size_t>(c.op)].name};
      for (int op : c.post_ops) ops.push_back(g.ops[static_cast<size_t>(op)].name);
      report.kernel_groups.push_back(fmt::format("{}: {}", c.name, fmt::join(ops, ", ")));
      ++report.extern_calls;  // a oneDNN call; its post-ops are not generated code either
    }
    if (!s.program.onednn_convs.empty()) report.layout = layout_report(g, s.program.onednn_convs, s.onednn);
    std::vector<bool> fallback(g.ops.size(), false);
    for (const auto& f : s.fallbacks) {
      fallback[static_cast<size_t>(f.op)] = true;
      const GraphOp& op = g.ops[static_cast<size_t>(f.op)];
      report.hints.push_back(hint("fallback_op", &op, fmt::format("{} runs as a LibTorch call: {}", op.name, f.reason)));
    }
    for (const auto& step : s.program.steps) {
      if (step.kind != Step::Kind::Extern) continue;
      if (fallback[static_cast<size_t>(step.index)]) ++report.fallback_calls;
      else ++report.extern_calls;
    }
  }

  bool strict_;
  std::unique_ptr<KernelLibraryBuilder> own_compiler_;
};

}  // namespace

std::unique_ptr<Backend> make_cpp_backend(bool strict, const std::string& cache_dir) {
  return std::make_unique<CppBackend>(strict, cache_dir);
}

}  // namespace tcprof
