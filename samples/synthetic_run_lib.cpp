#include <cmath>

#include "core/run_writer.h"
#include "samples/synthetic_run.h"

namespace tcprof {

void write_synthetic_run(const std::string& path, const SyntheticRunOptions& o) {
  RunInfo info;
  info.command = "synthetic";
  info.model_path = "samples/gpt_synthetic.pt";
  info.stance = "default";
  info.config_json = R"({"iters":20,"vary":["0:1=64..128"],"recompile_limit":8})";
  info.libtorch_version = "1.13.0";
  info.started_at = o.started_at;
  RunWriter w(path, info);
  int64_t t = o.base_ns;

  FrameEvent frame{w.next_id(), "forward", "", "model.py", 40};
  w.record(frame);
  auto compile = [&](const std::string& label, const std::string& reason) {
    CompileEvent c{w.next_id(), frame.id, label, reason, t, 85'000'000, "ok", false};
    w.record(c);
    const char* phases[] = {"capture", "decompose", "lower", "schedule", "codegen", "cc", "load"};
    int64_t pt = t;
    for (int i = 0; i < 7; ++i) {
      int64_t d = (i == 5) ? 60'000'000 : 4'000'000;
      w.record(CompilePhaseEvent{c.id, phases[i], pt, d});
      pt += d;
    }
    t += c.duration_ns;
    return c.id;
  };
  Id c0 = compile("0/0", "first call");
  Id g0 = w.next_id();
  w.record(GraphEvent{g0, c0, 42, "graph(%x: f32[4,s0,256]) ...", "extern \"C\" void kernel_0() {}"});
  GuardEvent size_guard{w.next_id(), c0, "size", "x.size(1) == 64", "model.py", 41};
  w.record(size_guard);
  w.record(GuardEvent{w.next_id(), c0, "dtype", "x.dtype == float32", "model.py", 41});
  w.record(GraphBreakEvent{c0, "data_dependent_branch", "TCB0004", "prim::If",
                           "if-statement condition depends on tensor data",
                           "use torch.where instead of a data-dependent if", "model.py", 57, 9,
                           "        if attn.sum() > 0:", "blocks.1.attn",
                           R"([{"file":"model.py","line":57,"function":"forward"}])"});

  const uint32_t kinds[] = {w.intern("generated"), w.intern("extern"), w.intern("fallback")};
  const uint32_t cpu = w.intern("cpu");
  const uint32_t names[] = {w.intern("fused_softmax_masked_fill"), w.intern("mm"),
                            w.intern("fused_layer_norm"), w.intern("fused_gelu_add"),
                            w.intern("aten::topk")};
  int64_t kernels_per_call = std::max<int64_t>(1, o.kernels / o.calls);
  int64_t written = 0;
  Id entry = c0;
  for (int64_t call = 0; call < o.calls; ++call) {
    Id call_id = w.next_id();
    if (call == 1) {  // sequence length changes: one recompile with a dynamic dimension
      w.record(GuardFailureEvent{call_id, c0, size_guard.id, "64", "96",
                                 "tensor 'x' size mismatch at index 1: expected 64, actual 96"});
      entry = compile("0/1", "tensor 'x' size mismatch at index 1: expected 64, actual 96");
      w.record(RecompileEvent{frame.id, call_id, entry,
                              "tensor 'x' size mismatch at index 1: expected 64, actual 96", 1});
      w.record(GraphBreakEvent{entry, "data_dependent_branch", "TCB0004", "prim::If",
                               "if-statement condition depends on tensor data",
                               "use torch.where instead of a data-dependent if", "model.py", 57, 9,
                               "        if attn.sum() > 0:", "blocks.1.attn",
                               R"([{"file":"model.py","line":57,"function":"forward"}])"});
    }
    int64_t start = t;
    for (int64_t k = 0; k < kernels_per_call && written < o.kernels; ++k, ++written) {
      KernelEvent e;
      e.call_id = call_id;
      e.graph_id = g0;
      int which = static_cast<int>(k % 5);
      e.name_id = names[which];
      e.kind_id = kinds[which == 1 ? 1 : (which == 4 ? 2 : 0)];
      e.device_id = cpu;
      e.start_ns = t;
      e.duration_ns = 20'000 + 10'000 * which + (k * 37 % 11) * 1'000;
      t += e.duration_ns + 2'000;
      w.record(e);
    }
    w.record(CallEvent{call_id, frame.id, entry, start, t - start, "compiled",
                       call == 0 ? "[[4,64,256]]" : "[[4,96,256]]"});
    t += 50'000;
  }
  for (int64_t s = 0; s < o.steps; ++s) {
    w.record(StepEvent{s, t, 12'000'000 + (s % 3) * 100'000, 2.5 * std::exp(-0.15 * static_cast<double>(s))});
    t += 12'500'000;
  }
  w.record(PerfHintEvent{c0, "fallback_kernel", "aten::topk",
                         "aten::topk has no lowering and runs as a fallback kernel", "model.py", 63});
  w.close("finished");
}

void write_sampled_gpu_run(const std::string& path, int64_t calls_recorded, int64_t calls_skipped) {
  RunInfo info;
  info.command = "run";
  info.device = "cuda:0";
  RunWriter w(path, info);
  const Id call = w.next_id();
  w.record(CallEvent{call, 0, 0, 0, 1'000'000, "compiled", ""});
  KernelEvent k;
  k.call_id = call;
  k.name_id = w.intern("sgemm_128x64_nn");
  k.kind_id = w.intern("gpu");
  k.device_id = w.intern("cuda:0");
  k.duration_ns = 400'000;
  w.record(k);
  w.record(CounterEvent{"cupti.calls_recorded", calls_recorded});
  w.record(CounterEvent{"cupti.calls_skipped", calls_skipped});
}

}  // namespace tcprof
