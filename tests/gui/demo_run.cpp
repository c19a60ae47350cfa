#include "tests/gui/demo_run.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/run_writer.h"
#include "core/sha256.h"

namespace tcprof::gui_test {

const char* demo_model_source() {
  return R"(import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.heads = heads
        self.calls = 0

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)) / (c ** 0.5)
        if attn.sum() > 0:
            attn = attn.masked_fill(attn < -1e4, 0.0)
        attn = attn.softmax(dim=-1)
        self.calls += 1
        return self.proj(attn @ v)


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))
        keep = h.nonzero()
        print("active units", keep.shape[0])
        return self.fc2(h)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    def __init__(self, dim=512, depth=4, heads=8):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.head = nn.Linear(dim, 1000)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        scale = x.abs().max().item()
        return self.head(x / scale)
)";
}

namespace {

struct Site {
  const char* type;
  const char* id;
  const char* op;
  const char* reason;
  const char* hint;
  int line, col;
  const char* source;
  const char* module;
};

const Site kSites[] = {
    {"data_dependent_branch", "TCB0002", "prim::If", "if-statement condition depends on tensor data (attn.sum() > 0)",
     "compute both branches and select with torch.where(attn.sum() > 0, a, b)", 17, 9,
     "        if attn.sum() > 0:", "blocks.1.attn"},
    {"module_state_mutation", "TCB0007", "prim::SetAttr", "forward() assigns self.calls: module state changes every call",
     "keep counters outside the compiled module, or register a buffer and update it in-place", 20, 9,
     "        self.calls += 1", "blocks.1.attn"},
    {"dynamic_output_shape", "TCB0004", "aten::nonzero", "aten::nonzero returns a tensor whose shape depends on the data",
     "use a fixed-size mask (h > 0) and reductions instead of nonzero()", 32, 16,
     "        keep = h.nonzero()", "blocks.3.mlp"},
    {"side_effect", "TCB0001", "prim::Print", "print() has a side effect that must run eagerly",
     "remove the print or guard it with `if not torch.jit.is_scripting()`", 33, 9,
     "        print(\"active units\", keep.shape[0])", "blocks.3.mlp"},
    {"scalar_output", "TCB0003", "aten::item", ".item() copies a tensor value to Python",
     "keep the value as a 0-d tensor: x / x.abs().amax()", 59, 17,
     "        scale = x.abs().max().item()", ""},
};

}  // namespace

void write_demo_run(const std::string& path, const DemoOptions& o) {
  const bool b = o.variant == 'b';
  RunInfo info;
  info.command = "train";
  info.model_path = "examples/gpt_small.pt";
  info.model_sha256 = "9f2c4e0b7a51d3e86c2f0a4b1d9e7c3a5b8f6e2d4c1a0b9e8d7c6b5a4f3e2d1c";
  info.stance = "default";
  info.config_json = R"({"iters":40,"vary":["0:1=64..160"],"recompile_limit":8,"backend":"cpp","loss":"cross_entropy","optimizer":"adam","seed":0})";
  info.libtorch_version = "1.13.1";
  info.started_at = b ? "2026-11-22T09:30:00Z" : "2026-11-22T09:00:00Z";
  RunWriter w(path, info);
  if (o.record_source) w.record(SourceEvent{"model.py", sha256_hex(demo_model_source()), demo_model_source()});
  int64_t t = 1'000'000'000;

  FrameEvent root{w.next_id(), "forward", "", "model.py", 56};
  FrameEvent attn{w.next_id(), "forward", "blocks.1.attn", "model.py", 13};
  w.record(root);
  w.record(attn);

  int attempts[2] = {0, 0};  // per frame, like Dynamo's "frame/attempt" compile ids
  auto compile = [&](const FrameEvent& frame, int frame_index, const std::string& reason, int64_t ms) {
    CompileEvent c{w.next_id(), frame.id, std::to_string(frame_index) + "/" + std::to_string(attempts[frame_index]++), reason, t,
                   ms * 1'000'000, "ok", false};
    w.record(c);
    const char* phases[] = {"capture", "decompose", "lower", "schedule", "codegen", "cc", "load"};
    const int share[] = {8, 4, 10, 6, 12, 55, 5};
    int64_t pt = t;
    for (int i = 0; i < 7; ++i) {
      int64_t d = c.duration_ns * share[i] / 100;
      w.record(CompilePhaseEvent{c.id, phases[i], pt, d});
      pt += d;
    }
    t += c.duration_ns;
    return c;
  };
  auto graph = [&](Id compile_id, int seq) {
    Id g = w.next_id();
    const std::string s = seq > 0 ? std::to_string(seq) : "s0";
    w.record(GraphEvent{
        g, compile_id, 38 + seq % 7,
        "graph(%x : Float(8, " + s + ", 512)):\n"
        "  %ln1 : Float(8, " + s + ", 512) = aten::layer_norm(%x, [512], %w1, %b1, 1e-05)\n"
        "  %qkv : Float(8, " + s + ", 1536) = aten::linear(%ln1, %wqkv, %bqkv)\n"
        "  %attn : Float(8, " + s + ", " + s + ") = aten::matmul(%q, %kt)\n"
        "  %soft : Float(8, " + s + ", " + s + ") = aten::softmax(%attn, -1)\n"
        "  %out : Float(8, " + s + ", 512) = aten::linear(%ctx, %wproj, %bproj)\n"
        "  return (%out)\n",
        "// generated by tcprof codegen (cpp backend)\n#include <cmath>\n#include <cstdint>\n\n"
        "extern \"C\" void fused_layer_norm_0(const float* __restrict__ x, float* __restrict__ out,\n"
        "                                   int64_t rows /* 8*" + s + " */) {\n"
        "  #pragma omp parallel for\n"
        "  for (int64_t r = 0; r < rows; ++r) {\n"
        "    float mean = 0.0f, var = 0.0f;\n"
        "    for (int64_t c = 0; c < 512; ++c) mean += x[r * 512 + c];\n"
        "    mean /= 512.0f;\n"
        "    for (int64_t c = 0; c < 512; ++c) {\n"
        "      float d = x[r * 512 + c] - mean;\n"
        "      var += d * d;\n"
        "    }\n"
        "    const float inv = 1.0f / std::sqrt(var / 512.0f + 1e-5f);\n"
        "    for (int64_t c = 0; c < 512; ++c) out[r * 512 + c] = (x[r * 512 + c] - mean) * inv;\n"
        "  }\n}\n"});
    return g;
  };
  auto guards = [&](Id compile_id, int seq) {
    GuardEvent size{w.next_id(), compile_id, "size",
                    seq > 0 ? "x.size(1) == " + std::to_string(seq) : "2 <= x.size(1) <= 4096", "model.py", 56};
    w.record(size);
    w.record(GuardEvent{w.next_id(), compile_id, "dtype", "x.dtype == torch.float32", "model.py", 56});
    w.record(GuardEvent{w.next_id(), compile_id, "device", "x.device == cpu", "model.py", 56});
    w.record(GuardEvent{w.next_id(), compile_id, "grad_mode", "torch.is_grad_enabled() == True", "model.py", 56});
    w.record(GuardEvent{w.next_id(), compile_id, "attr", "self.blocks[1].attn.heads == 8", "model.py", 10});
    return size.id;
  };
  auto breaks = [&](Id compile_id) {
    for (const Site& s : kSites) {
      const bool fixed_in_b = std::string(s.id) == "TCB0001";
      if (b && fixed_in_b) continue;
      w.record(GraphBreakEvent{compile_id, s.type, s.id, s.op, s.reason, s.hint, "model.py", s.line, s.col,
                               s.source, s.module,
                               std::string(R"([{"file":"model.py","line":58,"function":"Gpt.forward"},{"file":"model.py","line":)") +
                                   (s.line < 30 ? "46" : "47") + R"(,"function":"Block.forward"},{"file":"model.py","line":)" +
                                   std::to_string(s.line) + R"(,"function":")" + (s.line < 30 ? "Attention" : "Mlp") + R"(.forward"}])"});
    }
    if (b) {  // variant B introduces a new break
      w.record(GraphBreakEvent{compile_id, "unsupported_op", "TCB0005", "aten::_unique2",
                               "aten::_unique2 has no lowering and its output shape is data-dependent",
                               "avoid unique() in forward, or precompute it outside the compiled region", "model.py", 16, 9,
                               "        attn = (q @ k.transpose(-2, -1)) / (c ** 0.5)", "blocks.1.attn", "[]"});
    }
  };

  // Frame 1 (attention) compiles once; the root frame recompiles as the sequence grows.
  CompileEvent attn_compile = compile(attn, 1, "first call", 60);
  graph(attn_compile.id, 0);
  guards(attn_compile.id, 0);
  CompileEvent entry = compile(root, 0, "first call", b ? 150 : 210);
  Id entry_graph = graph(entry.id, 64);
  Id size_guard = guards(entry.id, 64);
  breaks(entry.id);
  int cache_size = 1;
  int current_seq = 64;

  const uint32_t cpu = w.intern("cpu"), gpu = w.intern("cuda:0");
  const uint32_t generated = w.intern("generated"), extern_kind = w.intern("extern"), fallback = w.intern("fallback"),
                 gpu_kind = w.intern("gpu");
  struct K {
    uint32_t name, kind, device;
    int stream;
    int64_t ns;
  };
  const std::vector<K> kernels = {
      {w.intern("fused_layer_norm_0"), generated, cpu, 0, 42'000},
      {w.intern("mm_qkv"), extern_kind, cpu, 0, b ? 120'000 : 150'000},
      {w.intern("fused_softmax_masked_fill"), generated, cpu, 0, b ? 55'000 : 90'000},
      {w.intern("bmm_attn"), extern_kind, cpu, 1, 80'000},
      {w.intern("fused_gelu_add"), generated, cpu, 1, 38'000},
      {w.intern("aten::nonzero"), fallback, cpu, 1, 26'000},
      {w.intern("sgemm_128x64_nn"), gpu_kind, gpu, 7, 18'000},
      {w.intern("vectorized_elementwise_kernel"), gpu_kind, gpu, 7, 4'000},
  };
  const int schedule[] = {64, 64, 64, 96, 96, 96, 96, 128, 128, 128, 160};
  for (int64_t call = 0; call < o.calls; ++call) {
    const int seq = schedule[std::min<int64_t>(call / 3, 10)];
    Id call_id = w.next_id();
    const int64_t step_start = t;
    std::string path = "compiled";
    if (seq != current_seq) {
      // Guard on the old entry fails; recompile (the third one marks the dimension dynamic).
      const std::string why = "tensor 'x' size mismatch at index 1: expected " + std::to_string(current_seq) +
                              ", actual " + std::to_string(seq);
      w.record(GuardFailureEvent{call_id, entry.id, size_guard, std::to_string(current_seq), std::to_string(seq), why});
      entry = compile(root, 0, why, b ? 120 : 170);
      w.record(RecompileEvent{root.id, call_id, entry.id, why, cache_size++});
      entry_graph = graph(entry.id, cache_size >= 3 ? 0 : seq);
      size_guard = guards(entry.id, cache_size >= 3 ? 0 : seq);
      breaks(entry.id);
      current_seq = seq;
    }
    if (call == o.calls - 2 || call == o.calls - 1) path = "eager";  // e.g. a stance switch at the end
    const int64_t start = t;
    for (int64_t k = 0; k < o.kernels_per_call; ++k) {
      const K& kind = kernels[static_cast<size_t>(k % static_cast<int64_t>(kernels.size()))];
      KernelEvent e;
      e.call_id = call_id;
      e.graph_id = entry_graph;
      e.name_id = kind.name;
      e.kind_id = kind.kind;
      e.device_id = kind.device;
      e.stream = kind.stream;
      e.start_ns = t;
      e.duration_ns = kind.ns * seq / 64 + (k * 7919 % 13) * 1'000;
      t += (kind.stream == 1 ? e.duration_ns / 2 : e.duration_ns) + 3'000;
      w.record(e);
    }
    w.record(CallEvent{call_id, root.id, path == "compiled" ? entry.id : 0, start, t - start, path,
                       "[[8," + std::to_string(seq) + ",512],[8]]"});
    // A training step wraps each call: forward (the call, with any recompile before it),
    // backward and the optimizer step.
    const int64_t forward_end = t;
    t += (b ? 4'000'000 : 6'000'000) + (call % 5) * 300'000;
    if (call < o.steps) {
      const double noise = 0.04 * std::sin(static_cast<double>(call) * 1.7);
      StepEvent step{call, step_start, t - step_start, 6.9 * std::exp(-0.07 * static_cast<double>(call)) + 0.4 + noise};
      step.forward_ns = forward_end - step_start;
      step.backward_ns = (t - forward_end) * 3 / 4;
      step.optimizer_ns = (t - forward_end) / 4;
      w.record(step);
    }
    t += 200'000;
  }
  w.record(PerfHintEvent{entry.id, "fallback_kernel", "aten::nonzero",
                         "aten::nonzero has no lowering and runs as a fallback kernel", "model.py", 32});
  w.close("finished");
}

}  // namespace tcprof::gui_test
