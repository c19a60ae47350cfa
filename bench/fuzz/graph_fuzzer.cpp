#include "bench/fuzz/graph_fuzzer.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tcprof::fuzz {
namespace fs = std::filesystem;
namespace {

std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory in " + fs::temp_directory_path().string());
  return pattern;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Report, source and module archive of a failing case, named by its seed.
void keep_failure(const std::string& dir, const FuzzCase& c, const CaseOutcome& outcome) {
  fs::create_directories(dir);
  const std::string stem = fmt::format("case-{}", c.seed);
  write_file(fs::path(dir) / (stem + ".txt"), outcome.report);
  write_file(fs::path(dir) / (stem + ".torchscript"), c.source);
  if (!outcome.archive.empty()) {
    std::error_code ec;
    fs::copy_file(outcome.archive, fs::path(dir) / (stem + ".pt"), fs::copy_options::overwrite_existing, ec);
    fs::remove(outcome.archive, ec);
  }
}

// What to print if the backend crashes the process: the case and how to run it again. Written
// before each case, read by the signal handler (which may only write() a ready buffer).
char g_crash_note[384] = "";

extern "C" void report_crash(int sig) {
  ssize_t ignored = ::write(STDERR_FILENO, g_crash_note, std::strlen(g_crash_note));
  (void)ignored;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// `flags`: the options the case needs again (--backward, the generator's, the backend's).
void set_crash_note(size_t index, uint64_t seed, const std::string& flags) {
  std::snprintf(g_crash_note, sizeof g_crash_note,
                "\nfuzz_graphs: the process crashed in case %zu (seed %llu); reproduce: fuzz_graphs --case %llu%s\n",
                index, static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed), flags.c_str());
}

// Runs `work` in a child process and returns what it returned. The parent only forks and reads:
// it never computes with LibTorch, so the child starts without OpenMP threads. On a crash
// `*signal` is the signal that killed the child and the result is empty.
std::string run_in_child(const std::function<std::string()>& work, int* signal) {
  *signal = 0;
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    std::string result = work();
    for (size_t done = 0; done < result.size();) {
      ssize_t n = ::write(fds[1], result.data() + done, result.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fds[1]);
    std::_Exit(0);  // no atexit handlers: they belong to the parent (the kernel cache directory)
  }
  ::close(fds[1]);
  std::string result;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) result.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) *signal = WTERMSIG(status);
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) *signal = -1;
  return *signal ? std::string() : result;
}

// CaseOutcome through the pipe: a line of counts, a line of fallback ops, the archive, the report.
std::string serialize(const CaseOutcome& o) {
  std::string s = fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n", static_cast<int>(o.status), o.calls,
                              o.kernels, o.window_kernels, o.fused_ops, o.extern_calls, o.fallback_calls, o.oracle_used,
                              o.unexpected_recompiles, o.compiled_backwards, o.unstable_eager, o.attention_kernels,
                              o.linear_gemms, o.onednn_gemms, o.rounding_draws_used, o.linear_epilogues, o.conv_epilogues);
  for (const auto& [op, n] : o.fallback_ops) s += fmt::format("{} {} ", op, n);
  return s + "\n" + o.archive + "\n" + o.report;
}

CaseOutcome deserialize(const std::string& text) {
  CaseOutcome o;
  std::istringstream in(text);
  int status = 0;
  in >> status >> o.calls >> o.kernels >> o.window_kernels >> o.fused_ops >> o.extern_calls >> o.fallback_calls >>
      o.oracle_used >> o.unexpected_recompiles >> o.compiled_backwards >> o.unstable_eager >> o.attention_kernels >>
      o.linear_gemms >> o.onednn_gemms >> o.rounding_draws_used >> o.linear_epilogues >> o.conv_epilogues;
  o.status = static_cast<CaseOutcome::Status>(status);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  std::istringstream ops(line);
  std::string op;
  for (int n; ops >> op >> n;) o.fallback_ops[op] = n;
  std::getline(in, o.archive);
  o.report.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return o;
}

CaseOutcome check_in_child(const FuzzCase& c, const CheckOptions& check) {
  int signal = 0;
  std::string result = run_in_child([&] { return serialize(check_case(c, check)); }, &signal);
  if (!signal) return deserialize(result);
  CaseOutcome o;
  o.status = CaseOutcome::Status::Error;
  o.report = fmt::format("ERROR: the process running the case died ({})\n",
                         signal > 0 ? fmt::format("signal {}: {}", signal, ::strsignal(signal)) : "exit status");
  if (c.name.empty()) {
    o.report += fmt::format("reproduce: fuzz_graphs --case {}{}\n", c.seed, c.known_bug_patterns ? "" : " --avoid-known-bugs");
  }
  o.report += describe_case(c, /*with_layouts=*/false);
  return o;
}

}  // namespace

uint64_t case_seed(uint64_t run_seed, int index) {
  // Distinct runs give distinct cases (seed 1 and seed 2 do not share shifted sequences).
  uint64_t x = run_seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(index);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return (x ^ (x >> 31)) & 0xffffffffffffULL;  // 48 bits: short enough to type
}

namespace {

// The generated source as its parts: "def forward(...):", the statements, the returned names.
struct SourceParts {
  std::string header;
  std::vector<std::string> statements;
  std::vector<std::string> returned;
};

std::optional<SourceParts> split_source(const std::string& source) {
  SourceParts p;
  std::istringstream in(source);
  std::string line;
  std::getline(in, p.header);
  while (std::getline(in, line)) {
    const std::string ret = "    return ";
    if (line.rfind(ret, 0) != 0) {
      p.statements.push_back(line);
      continue;
    }
    std::string e = line.substr(ret.size());
    if (!e.empty() && e.front() == '(') e = e.substr(1, e.size() - 2);
    for (size_t start = 0; start <= e.size();) {
      size_t comma = e.find(", ", start);
      p.returned.push_back(e.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
  }
  if (p.returned.empty()) return std::nullopt;
  return p;
}

std::string join_source(const SourceParts& p) {
  std::string s = p.header + "\n";
  for (const auto& st : p.statements) s += st + "\n";
  if (p.returned.size() == 1) return s + "    return " + p.returned[0] + "\n";
  return s + fmt::format("    return ({})\n", fmt::join(p.returned, ", "));
}

bool mentions(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    size_t end = at + name.size();
    if (end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) return true;
  }
  return false;
}

}  // namespace

FuzzCase minimize_case(const FuzzCase& c, const CheckOptions& options) {
  const CaseOutcome::Status status = check_case(c, options).status;
  auto parts = split_source(c.source);
  if (status == CaseOutcome::Status::Pass || status == CaseOutcome::Status::Invalid || !parts) return c;
  FuzzCase best = c;
  SourceParts p = *parts;
  auto still_fails = [&](FuzzCase t) {
    if (check_case(t, options).status != status) return false;
    best = std::move(t);
    return true;
  };
  auto with = [&](const SourceParts& q) {
    FuzzCase t = best;
    t.source = join_source(q);
    return t;
  };
  // One returned value.
  for (size_t k = 0; p.returned.size() > 1 && k < p.returned.size(); ++k) {
    SourceParts q = p;
    q.returned = {p.returned[k]};
    FuzzCase t = with(q);
    if (k < best.output_dependence.size()) t.output_dependence = {best.output_dependence[k]};
    if (still_fails(t)) {
      p = q;
      break;
    }
  }
  // The shortest prefix of the statements whose last value, returned alone, still fails.
  for (size_t n = 1; n < p.statements.size(); ++n) {
    const std::string& last = p.statements[n - 1];
    size_t eq = last.find(" = ");
    if (eq == std::string::npos) continue;  // an in-place statement names nothing
    SourceParts q = p;
    q.statements.resize(n);
    q.returned = {last.substr(4, eq - 4)};
    FuzzCase t = with(q);
    t.output_dependence.clear();  // unknown now: the loosest oracle test
    if (still_fails(t)) {
      p = q;
      break;
    }
  }
  // Statements, last first, until none can go.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = p.statements.size(); i-- > 0;) {
      SourceParts q = p;
      q.statements.erase(q.statements.begin() + static_cast<long>(i));
      if (still_fails(with(q))) {
        p = q;
        changed = true;
      }
    }
  }
  // Plainer inputs and calls.
  if (!best.dynamic_sizes.empty()) {
    FuzzCase t = best;
    t.dynamic_sizes.clear();
    for (auto& r : t.inputs) r.dynamic_dims.clear();
    still_fails(t);
  }
  for (size_t i = 0; i < best.inputs.size(); ++i) {
    FuzzCase t = best;
    t.inputs[i].layout = Layout::Contiguous;
    t.inputs[i].specials = false;
    if (t.inputs[i].layout != best.inputs[i].layout || best.inputs[i].specials) still_fails(t);
  }
  FuzzCase t = best;
  t.params.clear();
  for (const auto& param : best.params) {
    if (mentions(best.source, "self." + param.name)) t.params.push_back(param);
  }
  if (t.params.size() != best.params.size()) still_fails(t);
  best.name = best.name.empty() ? "minimized" : best.name + " (minimized)";
  return best;
}

void add_outcome(FuzzSummary& s, const FuzzCase& c, const CaseOutcome& o) {
  ++s.cases;
  s.ops += static_cast<int>(c.ops.size());
  for (const auto& op : c.ops) ++s.op_counts[op];
  s.calls += o.calls;
  s.kernels += o.kernels + o.window_kernels;
  s.fused_ops += o.fused_ops;
  s.fallback_calls += o.fallback_calls;
  s.oracle_used += o.oracle_used;
  s.rounding_draws_used += o.rounding_draws_used;
  s.unexpected_recompiles += o.unexpected_recompiles;
  s.backward_cases += o.compiled_backwards > 0;
  s.unstable_eager += o.unstable_eager;
  s.attention_kernels += o.attention_kernels;
  s.linear_gemms += o.linear_gemms;
  s.onednn_gemms += o.onednn_gemms;
  s.linear_epilogues += o.linear_epilogues;
  s.conv_epilogues += o.conv_epilogues;
  for (const auto& [op, n] : o.fallback_ops) s.fallback_ops[op] += n;
  switch (o.status) {
    case CaseOutcome::Status::Pass: break;
    case CaseOutcome::Status::Mismatch: ++s.mismatches; s.failures.push_back(o.report); break;
    case CaseOutcome::Status::Error: ++s.errors; s.failures.push_back(o.report); break;
    case CaseOutcome::Status::Invalid: ++s.invalid; break;
  }
  const bool compared = o.status == CaseOutcome::Status::Pass || o.status == CaseOutcome::Status::Mismatch;
  if (compared && o.kernels + o.window_kernels == 0) ++s.no_kernel;
}

FuzzSummary run_fuzz(const FuzzOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FuzzSummary summary;
  summary.gradients = options.gradients;
  const std::string work_dir = make_temp_dir("tcprof-fuzz");
  // The kernels themselves are what a differential run checks: every direct kernel over LibTorch's
  // op whatever this machine's timings (unless the caller set TCPROF_AUTOTUNE).
  ::setenv("TCPROF_AUTOTUNE", "kernels", 0);
  std::vector<uint64_t> seeds = options.case_seeds;
  if (seeds.empty()) {
    for (int i = 0; i < options.cases; ++i) seeds.push_back(case_seed(options.seed, options.first + i));
  }
  const size_t first = options.case_seeds.empty() ? static_cast<size_t>(options.first) : 0;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, report_crash);
  GeneratorOptions generator = options.generator;
  generator.differentiable = generator.differentiable || options.gradients;  // cases whose gradients are checked
  CheckOptions device_options;
  device_options.backend = options.backend;
  device_options.device = options.device;
  const std::string crash_flags = std::string(options.gradients ? " --backward" : "") +
                                  (options.generator.known_bug_patterns ? "" : " --avoid-known-bugs") +
                                  (options.generator.convolutions ? " --conv" : "") + (options.generator.pools ? " --pool" : "") +
                                  (options.generator.attention ? " --attention" : "") + backend_flags(device_options);
  for (size_t i = 0; i < seeds.size(); ++i) {
    set_crash_note(first + i, seeds[i], crash_flags);
    if (options.log) options.log->flush();
    FuzzCase c = generate_case(seeds[i], generator);
    if (options.log && !options.case_seeds.empty()) {  // asked for by seed
      *options.log << describe_case(c, /*with_layouts=*/!options.isolate) << std::flush;
    }
    CheckOptions check;
    check.tol = options.tol;
    check.gradients = options.gradients;
    check.backend = options.backend;
    check.device = options.device;
    check.work_dir = work_dir;
    check.keep_failed_archive = !options.keep_failures_dir.empty();
    CaseOutcome outcome = options.isolate ? check_in_child(c, check) : check_case(c, check);
    add_outcome(summary, c, outcome);
    const bool failed = outcome.status == CaseOutcome::Status::Mismatch || outcome.status == CaseOutcome::Status::Error;
    if (options.log && options.verbose) {
      *options.log << fmt::format("case {} (seed {}): {}, {} ops, {} calls, {} kernels with {} fused ops, {} fallback calls{}{}\n",
                                  first + i, c.seed, status_name(outcome.status), c.ops.size(), outcome.calls,
                                  outcome.kernels + outcome.window_kernels, outcome.fused_ops, outcome.fallback_calls,
                                  outcome.oracle_used ? fmt::format(", {} outputs by the oracle", outcome.oracle_used) : "",
                                  outcome.unexpected_recompiles ? fmt::format(", {} unexpected recompiles", outcome.unexpected_recompiles) : "");
    }
    if (options.log && (failed || (options.verbose && outcome.status == CaseOutcome::Status::Invalid))) {
      *options.log << "----\n" << outcome.report << "----\n";
    }
    if (failed && !options.keep_failures_dir.empty()) keep_failure(options.keep_failures_dir, c, outcome);
    if (failed && options.minimize && options.log) {
      CheckOptions quiet = check;
      quiet.keep_failed_archive = false;
      auto minimized = [&] { return describe_case(minimize_case(c, quiet), !options.isolate); };
      int signal = 0;
      std::string text = options.isolate ? run_in_child(minimized, &signal) : minimized();
      if (signal) text = "(the case crashes the process: minimize it by hand from fuzz_graphs --case)\n";
      *options.log << "---- minimized:\n" << text << "----\n" << std::flush;
    }
    if (options.log && !options.verbose && (i + 1) % 100 == 0) {
      *options.log << fmt::format("... {} cases, {} mismatches, {} errors\n", i + 1, summary.mismatches, summary.errors)
                   << std::flush;
    }
  }
  std::error_code ec;
  fs::remove_all(work_dir, ec);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string summary_line(const FuzzSummary& s) {
  return fmt::format(
      "{} cases, {} ops, {} calls compared: {} mismatches, {} errors, {} invalid cases; {} kernels with {} fused ops, "
      "{} fallback calls, {} cases without a kernel, {} outputs judged by the f64 oracle ({} with rounding draws), {} "
      "unexpected recompiles; {:.1f} s",
      s.cases, s.ops, s.calls, s.mismatches, s.errors, s.invalid, s.kernels, s.fused_ops, s.fallback_calls, s.no_kernel,
      s.oracle_used, s.rounding_draws_used, s.unexpected_recompiles, s.seconds) +
         (s.gradients ? fmt::format("; gradients: {} cases through a compiled backward, {} eager reruns that differed from "
                                    "eager's own first run", s.backward_cases, s.unstable_eager)
                      : "");
}

std::string coverage_text(const FuzzSummary& s) {
  std::string out = "generator ops:";
  for (const auto& [op, n] : s.op_counts) out += fmt::format(" {} {},", op, n);
  out.back() = '\n';
  if (s.attention_kernels > 0) out += fmt::format("attention kernels: {}\n", s.attention_kernels);
  if (s.linear_gemms > 0) out += fmt::format("linears run as GEMMs against prepared weights: {}\n", s.linear_gemms);
  if (s.onednn_gemms > 0) out += fmt::format("GEMMs of graph values run through oneDNN: {}\n", s.onednn_gemms);
  if (s.linear_epilogues > 0) out += fmt::format("linears with their activation as cuBLASLt's epilogue: {}\n", s.linear_epilogues);
  if (s.conv_epilogues > 0) out += fmt::format("convolutions with their ReLU in cuDNN's call: {}\n", s.conv_epilogues);
  if (!s.fallback_ops.empty()) {
    out += "left to LibTorch by the backend:";
    for (const auto& [op, n] : s.fallback_ops) out += fmt::format(" {} {},", op, n);
    out.back() = '\n';
  }
  return out;
}

PrivateKernelCache::PrivateKernelCache() {
  const char* set = std::getenv("TCPROF_CACHE_DIR");
  if (set && *set) {
    dir_ = set;
    return;
  }
  dir_ = make_temp_dir("tcprof-fuzz-kernels");
  owned_ = true;
  ::setenv("TCPROF_CACHE_DIR", dir_.c_str(), 1);
}

PrivateKernelCache::~PrivateKernelCache() {
  if (!owned_) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace tcprof::fuzz
