#include "compiler/backends/cpp/run/autotune_cache.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "compiler/toolchain/cache_files.h"
#include "compiler/toolchain/kernel_library.h"
#include "core/sha256.h"

namespace tcprof {
namespace {

namespace fs = std::filesystem;
constexpr const char* kHeader = "tcprof-autotune 3";  // 2: noise and margins; 3: GEMM methods

fs::path file_of(const std::string& cache_dir, const std::string& key) {
  return fs::path(cache_dir) / "autotune" / key.substr(0, 2) / (key + ".txt");
}

}  // namespace

std::string autotune_key(const std::string& material) { return sha256_hex(material); }

std::optional<std::vector<AutotuneChoice>> load_autotune(const std::string& cache_dir, const std::string& key,
                                                         size_t count) {
  if (cache_dir.empty() || key.size() < 2) return std::nullopt;
  std::ifstream in(file_of(cache_dir, key));
  std::string line;
  if (!in || !std::getline(in, line) || line != kHeader) return std::nullopt;
  std::vector<AutotuneChoice> out;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    AutotuneChoice c;
    std::string verdict;
    if (!(fields >> c.kernel_ns >> c.libtorch_ns >> verdict >> c.kernel_noise >> c.libtorch_noise >> c.margin)) {
      return std::nullopt;
    }
    size_t methods = 0;
    if (!(fields >> c.gemm_method >> methods) || c.gemm_method < -1 || methods > 16) return std::nullopt;
    for (size_t i = 0; i < methods; ++i) {
      GemmMethodTime t;
      if (!(fields >> t.method >> t.ns >> t.noise) || t.method < 0) return std::nullopt;
      c.gemm_times.push_back(t);
    }
    if (verdict != "kernel" && verdict != "libtorch" && verdict != "unmeasured") return std::nullopt;
    c.measured = verdict != "unmeasured";
    c.use_libtorch = verdict == "libtorch";
    out.push_back(c);
  }
  if (out.size() != count) return std::nullopt;
  return out;
}

bool store_autotune(const std::string& cache_dir, const std::string& key, const std::vector<AutotuneChoice>& choices) {
  if (cache_dir.empty() || key.size() < 2) return false;
  std::string text = std::string(kHeader) + "\n";
  for (const auto& c : choices) {
    text += fmt::format("{} {} {} {} {} {} {} {}", c.kernel_ns, c.libtorch_ns,
                        !c.measured ? "unmeasured" : c.use_libtorch ? "libtorch" : "kernel", c.kernel_noise,
                        c.libtorch_noise, c.margin, c.gemm_method, c.gemm_times.size());
    for (const GemmMethodTime& t : c.gemm_times) text += fmt::format(" {} {} {}", t.method, t.ns, t.noise);
    text += "\n";
  }
  fs::path path = file_of(cache_dir, key);
  try {
    ensure_dir(path.parent_path().string());
    write_file_atomic(path.string(), text);
    return true;
  } catch (const KernelLibraryError&) {
    return false;
  }
}

}  // namespace tcprof
