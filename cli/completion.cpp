#include "cli/completion.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace tcprof::cli {
namespace {

// Every flag spelling of `app`, with those that take a value listed apart (bash then completes a
// file name after them instead of another flag).
struct Flags {
  std::string all, with_value;
};

Flags flags_of(const CLI::App& app) {
  Flags f;
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->nonpositional() || opt->get_group().empty()) continue;  // hidden options stay hidden
    auto add = [&](const std::string& spelling) {
      f.all += (f.all.empty() ? "" : " ") + spelling;
      if (opt->get_items_expected_min() > 0) f.with_value += (f.with_value.empty() ? "" : "|") + spelling;
    };
    for (const auto& l : opt->get_lnames()) add("--" + l);
    for (const auto& s : opt->get_snames()) add("-" + s);
  }
  return f;
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  std::string commands, cases;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands += (commands.empty() ? "" : " ") + sub->get_name();
    Flags f = flags_of(*sub);
    cases += fmt::format("    {}) flags=\"{}\"; valued=\"{}\" ;;\n", sub->get_name(), f.all, f.with_value);
  }
  Flags top = flags_of(app);
  return fmt::format(R"(# bash completion for tcprof (written by `tcprof --bash-completion`)
_tcprof() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "{} {}" -- "$cur"))
    return
  fi
  local flags="" valued=""
  case ${{COMP_WORDS[1]}} in
{}  esac
  if [[ -n $valued && $prev == @($valued) ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F _tcprof tcprof
)",
                     commands, top.all, cases);
}

}  // namespace tcprof::cli
