#include "compiler/frontend/source_location.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>

namespace tcprof {

SourceLoc locate(const torch::jit::SourceRange& given) {
  SourceLoc loc;
  // Ranges in a loaded archive point at the serialized code/ file; the original Python file's
  // range is recorded as the range that generated it.
  auto original = given.findSourceRangeThatGenerated();
  const torch::jit::SourceRange& r = original ? *original : given;
  auto src = r.source();
  if (!src || (r.size() == 0 && r.start() == 0)) return loc;
  size_t line0 = src->lineno_for_offset(r.start());
  loc.file = src->filename() ? *src->filename() : std::string("<code>");
  loc.line = static_cast<int>(src->lineno_to_source_lineno(line0)) + (src->filename() ? 0 : 1);
  loc.col = static_cast<int>(r.start() - src->offset_for_line(line0)) + 1;
  std::string text = src->get_line(line0).str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  loc.text = text;
  if (src->lineno_for_offset(r.end() > r.start() ? r.end() - 1 : r.start()) == line0) {
    loc.expr = r.text().str();
    auto first = loc.expr.find_first_not_of(" \t");
    loc.expr = first == std::string::npos ? std::string() : loc.expr.substr(first);
    // Some ranges stop before their closing brackets (`parts["double"`): close what is open.
    std::string open;
    for (char c : loc.expr) {
      if (c == '(' || c == '[' || c == '{') open.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
      else if (!open.empty() && c == open.back()) open.pop_back();
    }
    loc.expr.append(open.rbegin(), open.rend());
  }
  return loc;
}

SourceLoc locate(const torch::jit::Node* node) { return locate(node->sourceRange()); }

std::string value_label(const torch::jit::Value* v) {
  std::string name = v->debugName();
  size_t dot = name.find('.');
  if (dot != std::string::npos && dot > 0) name = name.substr(0, dot);
  bool temporary = name.empty() || std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!temporary) return name;
  SourceLoc loc = locate(v->node());
  if (!loc.expr.empty() && loc.expr.size() <= 60) return loc.expr;
  return loc.known() ? fmt::format("value at {}:{}", std::filesystem::path(loc.file).filename().string(), loc.line) : name;
}

bool is_library_file(const std::string& file) {
  // "<string>": TorchScript's own helpers compiled from source strings (the shims behind
  // nn.functional), never the user's file.
  return file.find("/torch/") != std::string::npos || file.find("/torchvision/") != std::string::npos ||
         file.rfind("code/__torch__", 0) == 0 || file == "<string>";
}

}  // namespace tcprof
