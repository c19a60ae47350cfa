#include "importers/graph_break_text.h"

#include <cctype>
#include <vector>

#include <nlohmann/json.hpp>

namespace tcprof::import {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// "path:123" -> path, 123 (the path may itself contain ':').
void split_site(std::string_view site, std::string& file, int& line) {
  size_t colon = site.rfind(':');
  if (colon == std::string_view::npos) {
    file = std::string(site);
    return;
  }
  file = std::string(site.substr(0, colon));
  line = std::atoi(std::string(site.substr(colon + 1)).c_str());
}

// The registry id from the "gb/gb0059.html" link, as "GB0059".
std::string gb_id_of(std::string_view text) {
  size_t at = text.find("/gb/gb");
  if (at == std::string_view::npos) return {};
  at += 6;
  size_t end = at;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return end > at ? "GB" + std::string(text.substr(at, end - at)) : std::string();
}

std::string first_backticked(std::string_view text) {
  size_t open = text.find('`');
  if (open == std::string_view::npos) return {};
  size_t close = text.find('`', open + 1);
  if (close == std::string_view::npos) return {};
  return std::string(text.substr(open + 1, close - open - 1));
}

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

}  // namespace

bool is_library_path(std::string_view file) {
  return contains(file, "/site-packages/") || contains(file, "/dist-packages/") ||
         contains(file, "/lib/python3") || starts_with(file, "<frozen");
}

std::string break_type_for(const std::string& gb_id, std::string_view text) {
  if (gb_id == "GB0059") return "side_effect";
  if (gb_id == "GB0170") return "data_dependent_branch";
  if (gb_id == "GB0124") return "scalar_output";
  if (gb_id == "GB0036") return "dynamic_output_shape";
  if (!gb_id.empty()) return "unsupported_op";
  // Logs without registry ids (PyTorch 2.6 and older): the wording of Dynamo's messages, which
  // changes case between versions ("data-dependent branching", "Data-dependent branching").
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto says = [&](std::string_view what) { return contains(lower, what); };
  if (says("builtin: print") || says("`print`") || says("builtin print") || says("warnings.warn") ||
      says("builtin: warn")) {
    return "side_effect";
  }
  if (says("data-dependent branching") || says("data-dependent jump") || says("generic_jump")) {
    return "data_dependent_branch";
  }
  if (says("tensor.item") || says("item()") || says("capture_scalar_outputs")) return "scalar_output";
  if (says("dynamic shape operator") || says("capture_dynamic_output_shape_ops")) return "dynamic_output_shape";
  return "unsupported_op";
}

GraphBreakEvent parse_graph_break(std::string_view text) {
  GraphBreakEvent e;
  std::vector<std::string_view> lines = split_lines(text);
  std::string site_file, title, explanation, context;
  int site_line = 0;
  std::vector<std::string> hints;
  nlohmann::json stack = nlohmann::json::array();
  bool in_traceback = false;
  bool want_title = false;
  bool header_done = false;  // the Python traceback after the user's repeats the message: ignore it
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view raw = lines[i];
    std::string_view line = trim(raw);
    if (in_traceback) {
      // `  File "X", line N, in NAME` then the source line, more indented; ends at a blank line.
      if (line.empty() || starts_with(line, "Traceback (most recent")) {
        in_traceback = false;
        header_done = true;
        continue;
      }
      if (starts_with(line, "File \"")) {
        size_t q = line.find('"', 6);
        nlohmann::json frame;
        frame["file"] = std::string(line.substr(6, q == std::string_view::npos ? 0 : q - 6));
        size_t ln = line.find(", line ");
        frame["line"] = ln == std::string_view::npos ? 0 : std::atoi(std::string(line.substr(ln + 7)).c_str());
        size_t in = line.find(", in ");
        frame["function"] = in == std::string_view::npos ? "" : std::string(line.substr(in + 5));
        frame["source"] = "";
        if (i + 1 < lines.size() && !starts_with(trim(lines[i + 1]), "File \"") && !trim(lines[i + 1]).empty()) {
          frame["source"] = std::string(trim(lines[i + 1]));
          ++i;
        }
        stack.push_back(std::move(frame));
      }
      continue;
    }
    if (header_done) continue;
    if (starts_with(line, "Graph break in user code at ")) {
      split_site(line.substr(28), site_file, site_line);
    } else if (starts_with(line, "Graph Break Reason: ") || starts_with(line, "Reason: ")) {
      std::string_view content = line.substr(line.find(':') + 2);
      // A generic context ("when attempting to trace CALL: ...:") is followed by the registry title.
      if (!content.empty() && content.back() == ':') {
        context = std::string(content);
        want_title = true;
      } else {
        title = std::string(content);
      }
    } else if (want_title && !line.empty()) {
      title = std::string(line);
      want_title = false;
    } else if (starts_with(line, "Explanation: ")) {
      explanation = std::string(line.substr(13));
    } else if (starts_with(line, "Hint: ")) {
      hints.emplace_back(line.substr(6));
    } else if (line == "User code traceback:") {
      in_traceback = true;
    }
  }
  e.break_id = gb_id_of(text);
  e.reason = title.empty() ? context : title;
  if (!explanation.empty()) e.reason += (e.reason.empty() ? "" : ": ") + explanation;
  // Readers add their own full stop after the reason.
  while (!e.reason.empty() && e.reason.back() == '.') e.reason.pop_back();
  for (const auto& h : hints) e.hint += (e.hint.empty() ? "" : " ") + h;
  e.type = break_type_for(e.break_id, text);
  e.op = e.type == "data_dependent_branch" ? std::string() : first_backticked(explanation.empty() ? title : explanation);

  // The site, or the innermost frame of the user's own code when the site is in a library.
  e.file = site_file;
  e.line = site_line;
  const nlohmann::json* user = nullptr;
  for (const auto& f : stack) {
    if (!is_library_path(f["file"].get<std::string>())) user = &f;
  }
  if (!site_file.empty() && is_library_path(site_file) && user != nullptr) {
    e.reason = "in " + site_file + ":" + std::to_string(site_line) + ": " + e.reason;
    e.file = (*user)["file"].get<std::string>();
    e.line = (*user)["line"].get<int>();
  } else if (site_file.empty() && user != nullptr) {
    e.file = (*user)["file"].get<std::string>();
    e.line = (*user)["line"].get<int>();
  }
  for (const auto& f : stack) {
    if (f["file"] == e.file && f["line"] == e.line) e.source = f["source"].get<std::string>();
  }
  e.stack_json = stack.dump();
  return e;
}

}  // namespace tcprof::import
