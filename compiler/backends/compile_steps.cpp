#include "compiler/backends/compile_steps.h"

#include <algorithm>
#include <optional>

#include <ATen/ATen.h>

#include <fmt/format.h>

#include "compiler/autodiff/joint_graph.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "compiler/backends/cpp/schedule/plan_onednn_layout.h"
#include "compiler/frontend/guards.h"
#include "core/clock.h"
#include "core/log.h"

namespace tcprof {

void log_graph(const char* step, const CapturedGraph& g, int changed) {
  if (log_enabled(LogChannel::Passes)) log(LogChannel::Passes, "after {} ({} changes):\n{}", step, changed, g.ir());
}

void run_inference_passes(PassContext& ctx) {
  const CapturedGraph& g = ctx.graph;
  log_graph("simplify", g, simplify_graph(ctx));
  log_graph("functionalize", g, functionalize_inplace(ctx));
  log_graph("fold_constants", g, fold_constants(ctx));
  log_graph("fold_batch_norm", g, fold_batch_norm(ctx));
  log_graph("decompose_batch_norm", g, decompose_batch_norm(ctx));
  log_graph("split_reductions", g, split_reductions(ctx));
  log_graph("simplify", g, simplify_graph(ctx));
}

namespace {

// A copy with the same sizes and strides: clone() makes a broadcast input (expand's stride-0
// rows) dense, and kernels compiled for that layout do not take the real input (a backward's
// saved expand fell back to LibTorch's less exact mean: fuzz case --backward 6743363218254).
at::Tensor copy_keeping_layout(const at::Tensor& t) {
  if (t.is_non_overlapping_and_dense() || t.numel() == 0) return t.clone();
  const int64_t n = static_cast<int64_t>(t.storage().nbytes() / t.element_size());
  at::Tensor base = at::empty({n}, t.options());
  at::Tensor original = at::empty({0}, t.options());
  original.set_(t.storage(), 0, {n}, {1});
  base.copy_(original);
  return base.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

}  // namespace

// Every slot's value for the example inputs: the capture run's, when the frontend kept them, else
// one run of the graph (inputs cloned and the random generators restored, the CPU's and the
// graph's GPU's, so that the run changes nothing the user can see: a compile on a GPU that drew
// from its generator would shift every later rand_like and dropout from eager's).
std::vector<c10::IValue> example_run(const CapturedGraph& g, const std::vector<c10::IValue>& inputs) {
  if (g.capture_values && static_cast<int>(g.capture_values->size()) == g.num_slots) return *g.capture_values;
  std::vector<c10::IValue> slots(static_cast<size_t>(g.num_slots));
  for (size_t i = 0; i < inputs.size(); ++i) {
    slots[i] = inputs[i].isTensor() ? c10::IValue(copy_keeping_layout(inputs[i].toTensor())) : inputs[i];
  }
  InputBindings bindings(inputs);
  auto gen = at::detail::getDefaultCPUGenerator();
  at::Tensor rng = gen.get_state();
  const c10::Device device = graph_device(g, inputs);
  std::optional<at::Generator> device_gen;
  at::Tensor device_rng;
  if (device.is_cuda()) {
    device_gen = at::globalContext().defaultGenerator(device);
    device_rng = device_gen->get_state();
  }
  torch::jit::Stack stack;
  for (const auto& op : g.ops) {
    stack.clear();
    for (const Arg& a : op.args) stack.push_back(evaluate_arg(a, slots, bindings));
    run_op(op, stack);
    for (size_t o = 0; o < op.outputs.size(); ++o) slots[static_cast<size_t>(op.outputs[o])] = std::move(stack[o]);
  }
  gen.set_state(rng);
  if (device_gen) device_gen->set_state(device_rng);
  return slots;
}

// Why the graph needs autograd (an input or a parameter requires grad under grad mode), or empty.
// Parameters inside a constant list count (fuzz case 54401206388347: with only integer inputs
// beside `torch.cat([self.p1, self.p1], 1)`, the graph was compiled for inference, the cat folded,
// and the parameter got no gradient).
std::string autograd_reason(const CapturedGraph& g, const std::vector<c10::IValue>& inputs) {
  if (!at::GradMode::is_enabled()) return "";
  for (const auto& v : inputs) {
    if (v.isTensor() && v.toTensor().requires_grad()) return "an input requires grad";
  }
  for (const auto& op : g.ops) {
    for (const auto& a : op.args) {
      if (holds_parameter_requiring_grad(a)) return "parameters require grad";
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
        std::vector<std::string> ops;
        for (int op : step_ops(c)) ops.push_back(g.ops[static_cast<size_t>(op)].name);
        std::string scale = c.scale_slot < 0 ? "" : fmt::format(" * %{} dense", c.scale_slot);
        std::string pooled = c.pooled_slot < 0 ? "" : fmt::format(", pooled %{} dense", c.pooled_slot);
        // A dense value in memory other than NCHW (eager's format for it: channels-last) says so.
        auto layout = [](ValueLayout l, const std::string& dense) {
          return fmt::format("{}{}", value_layout_name(l), l != ValueLayout::Blocked && dense != "nchw" ? " " + dense : "");
        };
        std::string residual = c.residual_slot < 0 ? ""
                               : fmt::format(" + %{} {}{}", c.residual_slot, layout(c.residual_layout, c.dense_output_format()),
                                             c.residual_in_place ? " (written over)" : "");
        out += fmt::format("  onednn {} [{}]: %{} {} ({}){}{} -> %{} {} ({}){}\n", c.name, fmt::join(ops, ", "), c.input_slot,
                           layout(c.input_layout, c.dense_input_format()), p.input_format(), scale, residual, c.output_slot,
                           layout(c.output_layout, c.dense_output_format()), p.output_format(), pooled);
        break;
      }
      case Step::Kind::ChannelOp: {
        const ChainChannelOp& k = s.program.channel_ops[static_cast<size_t>(step.index)];
        std::vector<std::string> in;
        for (int slot : k.input_slots) in.push_back(fmt::format("%{}", slot));
        out += fmt::format("  chain {} [{}]: {} blocked -> %{} {}\n", k.name, g.ops[static_cast<size_t>(k.op)].name,
                           fmt::join(in, ", "), k.output_slot, value_layout_name(k.output_layout));
        break;
      }
    }
  }
  out += "\nkernels:\n";
  for (const auto& k : s.program.kernels) out += to_string(k);
  return out;
}

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

std::unique_ptr<CompiledGraph> eager_with_report(const CapturedGraph& g, CpuProfiler* profiler, CompileReport report) {
  log_hints(report.hints);
  report.ir = g.ir();
  report.extern_calls = static_cast<int>(g.ops.size());
  std::shared_ptr<CompiledGraph> graph = make_eager_backend()->compile(g, {}, profiler);
  return std::make_unique<ReportedGraph>(
      [graph](const std::vector<c10::IValue>& in, int64_t id) { return graph->run(in, id); }, std::move(report));
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

void summarize(const CapturedGraph& g, const ScheduledProgram& s, CompileReport& report) {
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
    std::vector<std::string> ops;
    for (int op : step_ops(c)) ops.push_back(g.ops[static_cast<size_t>(op)].name);
    report.kernel_groups.push_back(fmt::format("{}: {}", c.name, fmt::join(ops, ", ")));
    ++report.extern_calls;  // a oneDNN call; its post-ops are not generated code either
  }
  for (const auto& k : s.program.channel_ops) {
    report.kernel_groups.push_back(fmt::format("{}: {}", k.name, g.ops[static_cast<size_t>(k.op)].name));
    ++report.extern_calls;  // LibTorch over the chain's buffers, not generated code
  }
  if (!s.program.onednn_convs.empty()) {
    report.layout = layout_report(g, s.program.onednn_convs, s.program.channel_ops, s.onednn);
  }
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


}  // namespace tcprof
