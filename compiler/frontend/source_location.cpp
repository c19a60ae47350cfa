#include "compiler/frontend/source_location.h"

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
  return loc;
}

SourceLoc locate(const torch::jit::Node* node) { return locate(node->sourceRange()); }

bool is_library_file(const std::string& file) {
  return file.find("/torch/") != std::string::npos || file.find("/torchvision/") != std::string::npos ||
         file.rfind("code/__torch__", 0) == 0;
}

}  // namespace tcprof
