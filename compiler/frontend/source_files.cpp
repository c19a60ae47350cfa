#include "compiler/frontend/source_files.h"

#include <map>
#include <memory>
#include <set>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>

#include "compiler/frontend/source_location.h"

namespace tcprof {
namespace {

class SourceCollector {
 public:
  void visit_graph(const torch::jit::Graph& graph) {
    if (!graphs_.insert(&graph).second) return;
    visit_block(graph.block());
  }

  std::vector<UserSourceFile> files() const {
    std::vector<UserSourceFile> out;
    for (const auto& file : order_) {
      const auto& lines = lines_.at(file);
      std::string text;
      size_t last = lines.empty() ? 0 : lines.rbegin()->first;
      for (size_t n = 1; n <= last; ++n) {
        auto it = lines.find(n);
        if (it != lines.end()) text += it->second;
        text += '\n';
      }
      out.push_back({file, std::move(text)});
    }
    return out;
  }

 private:
  void visit_block(const torch::jit::Block* block) {
    for (const torch::jit::Node* node : block->nodes()) {
      add(node->sourceRange());
      for (const torch::jit::Block* b : node->blocks()) visit_block(b);
      if (node->kind() == c10::prim::CallFunction) {
        auto fn = node->input(0)->type()->cast<c10::FunctionType>();
        if (fn) visit_graph(*torch::jit::toGraphFunction(*fn->function()).graph());
      }
    }
  }

  // The source a range was generated from (a loaded archive points at its serialized code/),
  // each piece once: its lines go to their line numbers in the original file.
  void add(const torch::jit::SourceRange& range) {
    auto original = range.findSourceRangeThatGenerated();
    auto src = (original ? *original : range).source();
    if (!src || !src->filename() || !sources_.insert(src.get()).second) return;
    const std::string& file = *src->filename();
    if (is_library_file(file)) return;
    auto& lines = lines_[file];
    if (lines.empty()) order_.push_back(file);
    for (size_t i = 0; i < src->num_lines(); ++i) {
      std::string line = src->get_line(i).str();
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
      lines.emplace(src->lineno_to_source_lineno(i), std::move(line));
    }
  }

  std::set<const torch::jit::Graph*> graphs_;
  std::set<const torch::jit::Source*> sources_;
  std::map<std::string, std::map<size_t, std::string>> lines_;  // file -> line number -> text
  std::vector<std::string> order_;
};

}  // namespace

std::vector<UserSourceFile> user_source_files(const torch::jit::Module& module) {
  SourceCollector collector;
  for (const auto& m : module.modules()) {
    for (const auto& method : m.get_methods()) collector.visit_graph(*method.graph());
  }
  return collector.files();
}

}  // namespace tcprof
