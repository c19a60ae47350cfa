#include "importers/guard_text.h"

#include <cctype>
#include <regex>

#include <nlohmann/json.hpp>

namespace tcprof::import {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "... # source text  # path/file.py:134 in forward": the last comment names the user line.
void split_comment(std::string_view text, std::string& body, std::string& file, int& line) {
  size_t hash = text.find("  # ");
  body = std::string(trim(text.substr(0, hash)));
  if (hash == std::string_view::npos) return;
  std::string_view last = text.substr(text.rfind("# ") + 2);
  size_t in = last.find(" in ");
  std::string_view where = trim(last.substr(0, in));
  size_t colon = where.rfind(':');
  if (colon == std::string_view::npos) return;
  std::string digits(where.substr(colon + 1));
  if (digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0]))) return;
  file = std::string(where.substr(0, colon));
  line = std::atoi(digits.c_str());
}

}  // namespace

std::vector<GuardLeaf> parse_cpp_guards(std::string_view text) {
  std::vector<GuardLeaf> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    size_t node = line.find("+- ");
    if (node == std::string_view::npos) continue;
    std::string_view rest = line.substr(node + 3);
    size_t colon = rest.find(": ");
    if (colon == std::string_view::npos) continue;
    std::string_view kind = rest.substr(0, colon);
    // Structure: RootGuardManager, GuardManager, DictGuardManager, ... ; guards are UPPER_CASE.
    bool upper = !kind.empty();
    for (char c : kind) upper = upper && (std::isupper(static_cast<unsigned char>(c)) || c == '_' || std::isdigit(static_cast<unsigned char>(c)));
    if (!upper) continue;
    GuardLeaf g;
    g.kind.reserve(kind.size());
    for (char c : kind) g.kind += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    split_comment(rest.substr(colon + 2), g.expr, g.file, g.line);
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<RecompileReason> parse_recompile_reasons(const std::string& payload) {
  std::vector<std::string> items;
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, false);
  if (!j.is_discarded() && j.is_array()) {
    for (const auto& v : j) {
      if (v.is_string()) items.push_back(v.get<std::string>());
    }
  } else if (!j.is_discarded() && j.is_string()) {
    items.push_back(j.get<std::string>());
  } else if (!trim(payload).empty()) {
    items.push_back(payload);  // 2.11 with one reason: the bare text
  }
  static const std::regex label(R"(^\s*(\d+/\d+):\s*)");
  static const std::regex expected_actual(R"(expected ([^,]+?),? actual ([^\s,]+))");
  static const std::regex equality(R"(^(.+?)\s+==\s+(\S+)$)");
  std::vector<RecompileReason> out;
  for (const auto& item : items) {
    RecompileReason r;
    std::string text = item;
    std::smatch m;
    if (std::regex_search(text, m, label)) {
      r.compile_label = m[1];
      text = m.suffix();
    }
    // The first line is the reason; "User stack trace:" lines may follow.
    std::string first = text.substr(0, text.find('\n'));
    std::string body;
    split_comment(first, body, r.file, r.line);
    r.message = body;
    if (std::regex_search(body, m, expected_actual)) {
      r.expected = m[1];
      r.actual = m[2];
      if (!r.actual.empty() && r.actual.back() == '.') r.actual.pop_back();
    } else if (std::regex_search(body, m, equality)) {
      // A guard printed as an expression ("scale == 1.0"): it held the recorded value.
      r.guard = body;
      r.expected = m[2];
      r.actual = "another value (Dynamo does not log it)";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tcprof::import
