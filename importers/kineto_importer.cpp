#include "importers/kineto_importer.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <istream>
#include <streambuf>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace tcprof::import {
namespace {

// zlib as a std::streambuf, so the JSON parser reads a .json or .json.gz trace as a stream.
class GzStreamBuf : public std::streambuf {
 public:
  explicit GzStreamBuf(const std::string& path) : path_(path) {
    gz_ = gzopen(path.c_str(), "rb");
    if (gz_ == nullptr) throw Error(ErrorKind::Input, fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  }
  ~GzStreamBuf() override { gzclose(gz_); }
  bool damaged() const { return damaged_; }

 protected:
  int_type underflow() override {
    int n = gzread(gz_, buffer_, sizeof buffer_);
    int code = 0;
    gzerror(gz_, &code);
    if (n < 0 || code == Z_BUF_ERROR || code == Z_DATA_ERROR) damaged_ = true;
    if (n <= 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string path_;
  gzFile gz_ = nullptr;
  char buffer_[1 << 16];
  bool damaged_ = false;
};

// Streams the trace: `visit` sees each element of traceEvents, which is then dropped, so memory
// is one event at a time. Returns the document without its events (baseTimeNanoseconds, ...).
// An event whose fields have the wrong JSON types ("ph": 3) is skipped and counted in `malformed`:
// the rest of the trace is still worth importing.
nlohmann::json for_each_event(const std::string& path, const std::function<void(const nlohmann::json&)>& visit,
                              int64_t& malformed) {
  GzStreamBuf buf(path);
  std::istream in(&buf);
  bool in_events = false;
  nlohmann::json::parser_callback_t callback = [&](int depth, nlohmann::json::parse_event_t event,
                                                   nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (depth == 1 && event == E::key) in_events = parsed == "traceEvents";
    if (in_events && depth == 2 && event == E::object_end) {
      try {
        visit(parsed);
      } catch (const nlohmann::json::exception&) {
        ++malformed;
      }
      return false;
    }
    return true;
  };
  nlohmann::json doc = nlohmann::json::parse(in, callback, false);
  if (buf.damaged()) throw Error(ErrorKind::Input, fmt::format("'{}': the gzip stream is damaged or cut short", path));
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents")) {
    throw Error(ErrorKind::Input, fmt::format("'{}' is not a torch.profiler (Kineto) Chrome trace: no traceEvents", path));
  }
  return doc;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A CPU span that says something about the kernels launched inside it.
struct Span {
  enum Kind { Region, Forward, Backward, FxCall, Autotune } kind = Region;
  int64_t tid = 0;
  double start = 0, end = 0;  // Kineto us
  std::string text;           // region label or fx key
  int64_t seq = -1;           // autograd sequence number (CompiledFunction / ...Backward)
  Id call_id = 0, compile_id = 0;
};

struct Launch {
  int64_t tid = 0;
  double ts = 0;
};

int64_t as_int(const nlohmann::json& j, const char* key, int64_t fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

std::string dims(const nlohmann::json& j, const char* key, int32_t out[3]) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return {};
  for (size_t i = 0; i < 3 && i < it->size(); ++i) out[i] = (*it)[i].is_number() ? (*it)[i].get<int32_t>() : 0;
  return {};
}

}  // namespace

KinetoCounts import_kineto(const std::string& path, KinetoTarget& target) {
  // Pass 1: the CPU spans and launches that attribute kernels (kernels may come before them).
  std::vector<Span> spans;
  std::unordered_map<int64_t, Launch> launches;
  int64_t malformed_spans = 0, malformed_kernels = 0;
  nlohmann::json doc = for_each_event(path, [&](const nlohmann::json& e) {
    if (!e.is_object() || e.value("ph", "") != "X") return;
    std::string cat = e.value("cat", "");
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      const auto& args = e.value("args", nlohmann::json::object());
      int64_t corr = as_int(args, "correlation", -1);
      if (corr >= 0) launches[corr] = Launch{as_int(e, "tid"), e.value("ts", 0.0)};
      return;
    }
    if (cat != "cpu_op" && cat != "user_annotation") return;
    std::string name = e.value("name", "");
    Span s;
    if (starts_with(name, "Torch-Compiled Region: ")) {
      s.kind = Span::Region;
      s.text = name.substr(23);
    } else if (name == "CompiledFunction") {
      s.kind = Span::Forward;
    } else if (name == "CompiledFunctionBackward") {
      s.kind = Span::Backward;
    } else if (starts_with(name, "## Call CompiledFxGraph ")) {
      s.kind = Span::FxCall;
      s.text = name.substr(24, name.find(' ', 24) - 24);
    } else if (starts_with(name, "CachingAutotuner.benchmark_all_configs")) {
      s.kind = Span::Autotune;
    } else {
      return;
    }
    s.tid = as_int(e, "tid");
    s.start = e.value("ts", 0.0);
    s.end = s.start + e.value("dur", 0.0);
    s.seq = as_int(e.value("args", nlohmann::json::object()), "Sequence number", -1);
    spans.push_back(std::move(s));
  }, malformed_spans);
  KinetoCounts counts;
  if (doc.contains("distributedInfo") && doc["distributedInfo"].is_object()) {
    counts.rank = static_cast<int>(as_int(doc["distributedInfo"], "rank", -1));
  }
  const int64_t base_ns = as_int(doc, "baseTimeNanoseconds", 0);
  auto abs_ns = [&](double ts_us) { return base_ns + static_cast<int64_t>(std::llround(ts_us * 1000.0)); };

  // Each compiled-region occurrence is a call of that cache entry.
  RunWriter& w = *target.writer;
  for (auto& s : spans) {
    if (s.kind != Span::Region) continue;
    ++counts.regions;
    CallEvent call;
    call.id = w.next_id();
    auto compile = target.compile_by_label.find(s.text);
    call.compile_id = compile == target.compile_by_label.end() ? 0 : compile->second;
    auto frame = target.frame_by_compile.find(call.compile_id);
    call.frame_id = frame == target.frame_by_compile.end() ? 0 : frame->second;
    call.start_ns = abs_ns(s.start);
    call.duration_ns = static_cast<int64_t>(std::llround((s.end - s.start) * 1000.0));
    call.path = "compiled";
    s.call_id = call.id;
    s.compile_id = call.compile_id;
    w.record(call);
  }
  // A forward's call, by autograd sequence number: its backward's kernels belong to the same entry.
  std::unordered_map<int64_t, const Span*> region_by_seq;
  for (const auto& f : spans) {
    if (f.kind != Span::Forward || f.seq < 0) continue;
    for (const auto& r : spans) {
      if (r.kind == Span::Region && r.tid == f.tid && r.start <= f.start && f.end <= r.end) region_by_seq[f.seq] = &r;
    }
  }
  std::unordered_map<std::string, bool> fx_seen;

  const uint32_t memcpy_kind = w.intern("memcpy"), memset_kind = w.intern("memset"),
                 autotune_kind = w.intern("autotune"), eager_kind = w.intern("eager"),
                 generated_kind = w.intern("generated"), extern_kind = w.intern("extern");
  // Pass 2: the GPU work.
  for_each_event(path, [&](const nlohmann::json& e) {
    if (!e.is_object() || e.value("ph", "") != "X") return;
    std::string cat = e.value("cat", "");
    if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") return;
    const auto& args = e.value("args", nlohmann::json::object());
    KernelEvent k;
    std::string name = e.value("name", "");
    k.name_id = w.intern(name);
    k.device_id = w.intern(fmt::format("cuda:{}", as_int(args, "device", 0)));
    k.stream = static_cast<int32_t>(as_int(args, "stream", as_int(e, "tid")));
    k.start_ns = abs_ns(e.value("ts", 0.0));
    k.duration_ns = static_cast<int64_t>(std::llround(e.value("dur", 0.0) * 1000.0));
    dims(args, "grid", k.grid);
    dims(args, "block", k.block);
    k.correlation_id = as_int(args, "correlation", 0);
    // What enclosed the launch on its CPU thread.
    const Span *region = nullptr, *fx = nullptr, *backward = nullptr;
    bool autotune = false;
    auto launch = launches.find(k.correlation_id);
    if (launch != launches.end()) {
      for (const auto& s : spans) {
        if (s.tid != launch->second.tid || launch->second.ts < s.start || launch->second.ts > s.end) continue;
        if (s.kind == Span::Autotune) autotune = true;
        if (s.kind == Span::Region) region = &s;
        if (s.kind == Span::FxCall) fx = &s;
        if (s.kind == Span::Backward) backward = &s;
      }
    }
    if (region == nullptr && backward != nullptr) {
      auto it = region_by_seq.find(backward->seq);
      if (it != region_by_seq.end()) region = it->second;
    }
    bool compiled = region != nullptr || backward != nullptr;
    if (autotune) {
      // Launched while Inductor benchmarked configs during a compile: not the graph's run time.
      k.kind_id = autotune_kind;
      ++counts.autotune;
    } else {
      if (region != nullptr) k.call_id = region->call_id;
      if (fx != nullptr) {
        auto g = target.graph_by_fx_key.find(fx->text);
        if (g != target.graph_by_fx_key.end()) {
          k.graph_id = g->second;
          if (!fx_seen[fx->text]) ++counts.fx_keys_matched;
          fx_seen[fx->text] = true;
        }
      }
      if (k.graph_id == 0) {
        auto g = target.graph_by_kernel.find(name);
        if (g != target.graph_by_kernel.end()) k.graph_id = g->second;
      }
      if (cat == "gpu_memcpy") {
        k.kind_id = memcpy_kind;
      } else if (cat == "gpu_memset") {
        k.kind_id = memset_kind;
      } else if (compiled) {
        k.kind_id = starts_with(name, "triton_") ? generated_kind : extern_kind;
      } else {
        k.kind_id = eager_kind;
      }
      ++(compiled ? counts.compiled : counts.eager);
    }
    w.record(k);
    ++counts.kernels;
  }, malformed_kernels);
  counts.malformed = std::max(malformed_spans, malformed_kernels);
  if (target.kernels != nullptr) *target.kernels += counts.kernels;
  return counts;
}

}  // namespace tcprof::import
