// Maps TorchScript nodes back to the user's source: file, line, column and the text of the line,
// from the archive's debug information. Nodes that come from PyTorch's own modules point into
// torch's site-packages; callers use the call stack to find the innermost user frame.
#pragma once
#include <string>
#include <vector>

namespace torch::jit {
struct Node;
struct SourceRange;
struct Value;
}  // namespace torch::jit

namespace tcprof {

struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  std::string text;  // the source line, without its newline
  std::string expr;  // the node's own expression when it fits on its line (`x.sum().item()`)
  bool known() const { return !file.empty() && line > 0; }
};

SourceLoc locate(const torch::jit::SourceRange& range);
SourceLoc locate(const torch::jit::Node* node);

// A name the user recognises for a value: its Python variable, or for a temporary (TorchScript
// numbers those: '13') the expression that computed it (`x.sum().item()`).
std::string value_label(const torch::jit::Value* value);

// True for files inside an installed torch / torchvision package: not the user's code.
bool is_library_file(const std::string& file);

// One entry of a call stack: where a module method was called from, outermost first.
struct StackEntry {
  std::string module_path;  // "" for the root module
  std::string function;     // e.g. "forward"
  SourceLoc loc;            // the call site (or, for the last entry, the node itself)
};

}  // namespace tcprof
