#include "analysis/break_sites.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <unordered_map>

#include <fmt/format.h>

namespace tcprof::analysis {

std::string file_basename(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string normalise_source(std::string_view source) {
  // A trailing comment is not the code: rewording it must not make a new site.
  char quote = 0;
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      source = source.substr(0, i);
      break;
    }
  }
  std::string out;
  bool space = false;
  for (char c : source) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

std::string normalise_frame_name(std::string_view name) {
  // A path-like token followed by :line (and :col): keep the file name only.
  static const std::regex located(R"(([^\s()]*/)?([^\s/():]+):\d+(:\d+)?)");
  return std::regex_replace(std::string(name), located, "$2");
}

std::string site_key(std::string_view type, std::string_view break_id, std::string_view file,
                     std::string_view source, std::string_view module_path) {
  // \x1f (unit separator) cannot occur in any of the parts.
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", type, break_id, file_basename(file),
                     normalise_source(source), module_path);
}

std::string site_key(const GraphBreakRow& b) {
  return site_key(b.type, b.break_id, b.file, b.source, b.module_path);
}

std::vector<BreakSite> group_break_sites(const std::vector<GraphBreakRow>& breaks) {
  std::vector<BreakSite> sites;
  std::unordered_map<std::string, size_t> index;
  for (const auto& b : breaks) {
    std::string key = site_key(b);
    auto [it, inserted] = index.try_emplace(key, sites.size());
    if (inserted) {
      BreakSite s;
      s.key = std::move(key);
      s.type = b.type;
      s.break_id = b.break_id;
      s.op = b.op;
      s.reason = b.reason;
      s.hint = b.hint;
      s.file = b.file;
      s.module_path = b.module_path;
      s.stack_json = b.stack_json;
      s.source = b.source;
      sites.push_back(std::move(s));
    }
    BreakSite& s = sites[it->second];
    s.line = b.line;
    s.col = b.col;
    ++s.count;
  }
  std::stable_sort(sites.begin(), sites.end(), [](const BreakSite& a, const BreakSite& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.file != b.file) return a.file < b.file;
    return a.line < b.line;
  });
  return sites;
}

std::vector<BreakSite> break_sites(const RunReader& reader, Id run_id) {
  return group_break_sites(reader.graph_breaks(run_id));
}

}  // namespace tcprof::analysis
