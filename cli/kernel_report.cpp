#include "cli/kernel_report.h"

#include <algorithm>
#include <iterator>

#include "analysis/gpu_graph_time.h"
#include "analysis/kernel_stats.h"
#include "analysis/run_summary.h"
#include "cli/json_rows.h"
#include "cli/text_format.h"

namespace tcprof::cli {
namespace {

// GPU work and CUDA API calls overlap the host's kernels: they are not part of a call's host-side
// breakdown (analysis::kernel_place).
bool host_kind(const std::string& kind) { return analysis::kernel_place(kind) == analysis::KernelPlace::Host; }

void write_stats_table(fmt::memory_buffer& out, const std::vector<analysis::KernelStats>& stats, size_t top,
                       const std::string& title) {
  auto o = std::back_inserter(out);
  size_t shown = std::min(top, stats.size());
  fmt::format_to(o, "\n  {} (top {} of {} by total time)\n", title, shown, stats.size());
  fmt::format_to(o, "    {:>6} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "Time", "Total",
                 "Inst", "Avg", "Med", "Min", "Max", "StdDev");
  for (size_t i = 0; i < shown; ++i) {
    const auto& k = stats[i];
    std::string tag = fmt::format("[{}, {}]", k.kind, k.device);
    // A table row: the name takes what the terminal leaves beside its tag.
    size_t room = text::terminal_width() > tag.size() + 30 ? text::terminal_width() - tag.size() - 6 : 24;
    fmt::format_to(o, "    {}  {}\n", text::fit(k.name, room), tag);
    fmt::format_to(o, "    {:>6} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
                   text::percent(k.time_percent), text::duration(static_cast<double>(k.total_ns)),
                   text::count(k.instances), text::duration(k.avg_ns), text::duration(k.median_ns),
                   text::duration(static_cast<double>(k.min_ns)),
                   text::duration(static_cast<double>(k.max_ns)), text::duration(k.stddev_ns));
  }
  if (stats.size() > shown) fmt::format_to(o, "    … {} more\n", stats.size() - shown);
}

// "graph 5 (compile 0/0)"; a graph compiled from a captured one names its kind after the compile
// ("graph 6 (0/0 aot_backward)"), and one outside any compile its kind alone ("graph 1 (optimizer)").
std::string graph_label(const GraphKernelTime& g) {
  if (g.graph_id == 0) return "outside graphs";
  const bool captured = g.graph_kind == "captured" || g.graph_kind == "dynamo";
  std::string what = g.compile_label.empty() ? (captured ? "no compile" : g.graph_kind)
                     : captured              ? "compile " + g.compile_label
                                             : g.compile_label + " " + g.graph_kind;
  return fmt::format("graph {} ({})", g.graph_id & 0xffffffff, what);
}

// Where call time went apart from kernels: compiles that ran inside a call (a call that misses
// the cache compiles before it runs), and the rest, the runtime's own dispatch.
struct CallTime {
  int64_t total_ns = 0, compile_ns = 0;
};

CallTime call_time(const RunReader& reader, Id run_id) {
  CallTime t;
  auto calls = reader.calls(run_id);  // ordered by start
  for (const auto& c : calls) t.total_ns += c.duration_ns;
  for (const auto& comp : reader.compiles(run_id)) {
    auto after = std::upper_bound(calls.begin(), calls.end(), comp.start_ns,
                                  [](int64_t ts, const CallRow& c) { return ts < c.start_ns; });
    if (after == calls.begin()) continue;
    const CallRow& c = *std::prev(after);
    int64_t end = std::min(comp.start_ns + comp.duration_ns, c.start_ns + c.duration_ns);
    if (end > comp.start_ns) t.compile_ns += end - comp.start_ns;
  }
  return t;
}

std::string copy_cell(const analysis::CopyTime& c) {
  if (c.count == 0) return "-";
  return fmt::format("{} in {}", text::bytes(c.bytes), text::duration(static_cast<double>(c.ns)));
}

// A CUDA run: per graph, the GPU's time, the host's launch cost and the GPU's idle gaps, so a
// graph starved by its launches (idle and launch high, GPU busy low) stands out.
void write_gpu_graph_table(fmt::memory_buffer& out, const std::vector<analysis::GpuGraphTime>& graphs,
                           int64_t peak_bytes) {
  auto o = std::back_inserter(out);
  bool exact = std::all_of(graphs.begin(), graphs.end(), [](const auto& g) { return g.idle_exact; });
  fmt::format_to(o, "\n  GPU time by graph (busy: kernels and fills on the GPU; launch: CUDA API calls on the host;\n"
                    "  idle: gaps between the graph's GPU work within a call{})\n",
                 exact ? "" : ", at least (--profile summary keeps no per-launch times)");
  fmt::format_to(o, "    {:<26} {:>6} {:>8} {:>9} {:>20} {:>20} {:>9} {:>9}\n", "Graph", "Calls", "Kernels",
                 "Busy", "Copies HtoD", "Copies DtoH", "Launch", "Idle");
  for (const auto& g : graphs) {
    std::string label = g.graph_id == 0 ? "outside graphs"
                                        : fmt::format("graph {} ({})", g.graph_id & 0xffffffff,
                                                      g.compile_label.empty() ? "no compile" : "compile " + g.compile_label);
    fmt::format_to(o, "    {:<26} {:>6} {:>8} {:>9} {:>20} {:>20} {:>9} {:>9}\n", text::fit(label, 26),
                   text::count(g.calls), text::count(g.kernels), text::duration(static_cast<double>(g.kernel_ns)),
                   copy_cell(g.htod), copy_cell(g.dtoh), text::duration(static_cast<double>(g.launch_ns)),
                   text::duration(static_cast<double>(g.idle_ns)));
    if (g.other_copies.count > 0) {
      fmt::format_to(o, "    {:<26} other copies (device to device, peer): {}\n", "", copy_cell(g.other_copies));
    }
  }
  if (peak_bytes > 0) {
    fmt::format_to(o, "    peak GPU memory in a call: {} (CUDA caching allocator)\n", text::bytes(peak_bytes));
  }
}

nlohmann::json copy_json(const analysis::CopyTime& c) {
  return {{"bytes", c.bytes}, {"ns", c.ns}, {"count", c.count}};
}

}  // namespace

void write_kernel_report_header(fmt::memory_buffer& out, const RunRow& run) {
  std::string path = run.model_path.empty() ? "-" : run.model_path;
  std::string rest = fmt::format(" · {} · {}", run.started_at, analysis::status_text(run));
  std::string head = fmt::format("Run {} · {} ", run.id, run.command);
  // Columns, not bytes: "·" is two bytes and one column.
  auto columns = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  size_t room = 80 > columns(head) + columns(rest) ? 80 - columns(head) - columns(rest) : 8;
  if (columns(path) > room) {
    size_t cut = path.size() - (room - 1);  // keep the tail: the file name matters most
    while (cut < path.size() && (static_cast<unsigned char>(path[cut]) & 0xC0) == 0x80) ++cut;
    path = "\u2026" + path.substr(cut);
  }
  fmt::format_to(std::back_inserter(out), "\n{}{}{}\n", head, path, rest);
}

void write_kernel_report(fmt::memory_buffer& out, const RunReader& reader, Id run_id, size_t top) {
  auto o = std::back_inserter(out);
  const auto counters = reader.counters(run_id);
  for (const auto& [name, value] : counters) {
    if (name == "cupti.dropped_records" && value > 0) {
      fmt::format_to(o, "  warning: CUPTI dropped {} GPU activity records: GPU totals are low\n",
                     text::count(value));
    }
  }
  if (const auto coverage = analysis::gpu_call_coverage(counters); coverage.sampled()) {
    fmt::format_to(o, "{}", text::wrap("  ", coverage.text()));
  }
  auto stats = analysis::kernel_stats(reader, run_id);
  if (stats.empty()) {
    fmt::format_to(o, "\n  No kernels recorded (was the run made with --profile off?)\n");
    return;
  }
  using analysis::KernelPlace;
  auto gpu = analysis::stats_of_place(stats, KernelPlace::Gpu);
  auto api = analysis::stats_of_place(stats, KernelPlace::CudaApi);
  if (gpu.empty() && api.empty()) {
    write_stats_table(out, stats, top, "Kernels");
  } else {
    // A CUDA run: what the GPU spent its time on first, then the host, then the driver calls.
    if (!gpu.empty()) write_stats_table(out, gpu, top, "GPU kernels, copies and fills (time on the GPU)");
    auto host = analysis::stats_of_place(stats, KernelPlace::Host);
    if (!host.empty()) write_stats_table(out, host, top, "CPU kernels and eager ops");
    if (!api.empty()) write_stats_table(out, api, top, "CUDA API calls (time on the CPU)");
    auto outside = analysis::stats_of_place(stats, KernelPlace::OutsideCalls);
    if (!outside.empty()) {
      write_stats_table(out, outside, top, "Copies to the GPU outside calls (inputs, targets, weights; in no call's time)");
    }
  }
  auto gpu_graphs = analysis::gpu_graph_times(reader, run_id);
  if (!gpu_graphs.empty()) write_gpu_graph_table(out, gpu_graphs, analysis::peak_gpu_bytes(reader.calls(run_id)));

  auto split = reader.graph_kernel_times(run_id);
  CallTime calls = call_time(reader, run_id);
  int64_t calls_ns = calls.total_ns;
  int64_t host_ns = 0;
  for (const auto& g : split) host_ns += host_kind(g.kind) ? g.total_ns : 0;
  int64_t base = calls_ns > 0 ? std::max(calls_ns, host_ns) : host_ns;
  auto share = [&](int64_t ns) {
    return base > 0 ? text::percent(100.0 * static_cast<double>(ns) / static_cast<double>(base)) : "-";
  };
  fmt::format_to(o, "\n  Time by graph and kind (share of {})\n",
                 calls_ns > 0 ? "call time, " + text::duration(static_cast<double>(calls_ns))
                              : "kernel time");
  fmt::format_to(o, "    {:<30} {:<14} {:>9} {:>6} {:>9}\n", "Graph", "Kind", "Total", "Share", "Inst");
  Id previous = -1;
  for (const auto& g : split) {
    std::string label = g.graph_id == previous ? "" : graph_label(g);
    previous = g.graph_id;
    fmt::format_to(o, "    {:<30} {:<14} {:>9} {:>6} {:>9}\n", text::fit(label, 30),
                   text::fit(g.kind, 14), text::duration(static_cast<double>(g.total_ns)),
                   host_kind(g.kind) ? share(g.total_ns) : "-", text::count(g.instances));
  }
  if (calls_ns > 0) {
    if (calls.compile_ns > 0) {
      fmt::format_to(o, "    {:<30} {:<14} {:>9} {:>6}\n", "calls, outside any kernel", "compile",
                     text::duration(static_cast<double>(calls.compile_ns)), share(calls.compile_ns));
    }
    int64_t dispatch = std::max<int64_t>(0, calls_ns - host_ns - calls.compile_ns);
    fmt::format_to(o, "    {:<30} {:<14} {:>9} {:>6}\n",
                   calls.compile_ns > 0 ? "" : "calls, outside any kernel", "dispatch",
                   text::duration(static_cast<double>(dispatch)), share(dispatch));
  }
}

nlohmann::json kernel_report_json(const RunReader& reader, Id run_id) {
  using nlohmann::json;
  json kernels = json::array();
  for (const auto& k : analysis::kernel_stats(reader, run_id)) {
    json row = json_rows::kernel_stats(k);
    row["place"] = analysis::place_name(analysis::kernel_place(k.kind));
    kernels.push_back(std::move(row));
  }
  json graphs = json::array();
  int64_t host_ns = 0;
  for (const auto& g : reader.graph_kernel_times(run_id)) {
    if (host_kind(g.kind)) host_ns += g.total_ns;
    graphs.push_back({{"graph_id", g.graph_id}, {"compile_id", g.compile_label}, {"kind", g.kind},
                      {"total_ns", g.total_ns}, {"instances", g.instances}});
  }
  json gpu_graphs = json::array();
  for (const auto& g : analysis::gpu_graph_times(reader, run_id)) {
    gpu_graphs.push_back({{"graph_id", g.graph_id}, {"compile_id", g.compile_label}, {"calls", g.calls},
                          {"kernels", g.kernels}, {"kernel_ns", g.kernel_ns}, {"gpu_ns", g.gpu_ns()},
                          {"htod", copy_json(g.htod)}, {"dtoh", copy_json(g.dtoh)},
                          {"other_copies", copy_json(g.other_copies)}, {"launch_ns", g.launch_ns},
                          {"idle_ns", g.idle_ns}, {"idle_exact", g.idle_exact}});
  }
  CallTime calls = call_time(reader, run_id);
  json counters = json::object();
  const auto counter_rows = reader.counters(run_id);
  for (const auto& [name, value] : counter_rows) counters[name] = value;
  const auto coverage = analysis::gpu_call_coverage(counter_rows);
  return {{"kernels", kernels},
          {"gpu_calls", {{"recorded", coverage.recorded}, {"skipped", coverage.skipped}, {"sampled", coverage.sampled()}}},
          {"counters", counters},
          {"graph_kinds", graphs},
          {"gpu_graphs", gpu_graphs},
          {"peak_gpu_bytes", analysis::peak_gpu_bytes(reader.calls(run_id))},
          {"call_time_ns", calls.total_ns},
          {"compile_in_calls_ns", calls.compile_ns},
          {"dispatch_ns", std::max<int64_t>(0, calls.total_ns - host_ns - calls.compile_ns)}};
}

}  // namespace tcprof::cli
