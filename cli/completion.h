// `tcprof --bash-completion`: a bash completion script written from the command-line definition
// itself, so it always lists the subcommands and flags this build has (installed by CMake).
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace tcprof::cli {

std::string bash_completion(const CLI::App& app);

}  // namespace tcprof::cli
