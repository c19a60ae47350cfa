// `tcprof breaks [ID]`: the graph-break registry — what each TCB id means and how to fix it.
// `--markdown` prints docs/graph-breaks.md (a test keeps the file in sync).
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "compiler/frontend/break_registry.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

struct BreaksOptions {
  std::string id;
  bool markdown = false;
  bool json = false;
};

std::string markdown() {
  std::string out =
      "# Graph breaks\n\n"
      "Every graph break tcprof reports carries a stable id from this registry\n"
      "(`compiler/frontend/break_registry.cpp`; this file is `tcprof breaks --markdown`). An id never changes\n"
      "meaning, so CI baselines and scripts can match on it. `type` is the PRODUCT.md break type.\n\n"
      "| id | type | what | why it breaks | how to fix |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& b : all_breaks()) {
    out += fmt::format("| {} | `{}` | {} | {} | {} |\n", b.id, b.type, b.title, b.explanation, b.hint);
  }
  out +=
      "\nAn aten op that tcprof can run but not lower (a fallback kernel) is **not** a break: it is a\n"
      "perf hint. Control flow on shapes, constants or module attributes is not a break either: it is\n"
      "decided at capture time and becomes a guard, such as `x.size(0) > 4` at the line that made the\n"
      "decision.\n";
  return out;
}

}  // namespace

void add_breaks_command(CLI::App& app) {
  auto o = std::make_shared<BreaksOptions>();
  auto* cmd = app.add_subcommand("breaks", "List the graph-break registry: what each TCB id means and how to fix it");
  cmd->add_option("id", o->id, "Only this id, e.g. TCB0004");
  cmd->add_flag("--markdown", o->markdown, "Print the registry as docs/graph-breaks.md");
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] {
    if (o->markdown) {
      std::cout << markdown();
      return;
    }
    nlohmann::json list = nlohmann::json::array();
    bool found = false;
    for (const auto& b : all_breaks()) {
      if (!o->id.empty() && b.id != o->id) continue;
      found = true;
      if (o->json) {
        list.push_back({{"id", b.id}, {"type", b.type}, {"title", b.title},
                        {"explanation", b.explanation}, {"hint", b.hint}});
        continue;
      }
      std::cout << fmt::format("{} {}: {}\n  {}\n  hint: {}\n\n", b.id, b.type, b.title, b.explanation, b.hint);
    }
    if (!found) throw Error(ErrorKind::Usage, fmt::format("no graph break has the id '{}' (see tcprof breaks)", o->id));
    if (o->json) std::cout << list.dump(2) << "\n";
  });
}

}  // namespace tcprof::cli
