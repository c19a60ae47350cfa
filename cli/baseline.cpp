#include "cli/baseline.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof::cli {

using nlohmann::json;

analysis::Baseline load_baseline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorKind::Input, fmt::format("baseline '{}' does not exist or cannot be read (create "
                                              "it with --update-baseline)", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) {
    throw Error(ErrorKind::Input, fmt::format("baseline '{}' is malformed: not valid JSON (rewrite it "
                                              "with --update-baseline)", path));
  }
  return analysis::baseline_from_json(j, path);
}

void save_baseline(const analysis::Baseline& baseline, const std::string& path) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << analysis::baseline_to_json(baseline).dump(2) << "\n";
    if (!out) throw Error(ErrorKind::Input, fmt::format("cannot write baseline '{}'", path));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(ErrorKind::Input, fmt::format("cannot write baseline '{}'", path));
  }
}

}  // namespace tcprof::cli
