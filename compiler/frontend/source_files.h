// The user's source files as the model's debug info carries them, for the run's `sources` table:
// readers (the GUI's source panes, reports) show source from the database alone, without the
// model file. TorchScript keeps each scripted function's source with its first line number; the
// pieces of one file are laid back at their lines (lines no piece covers stay empty).
#pragma once
#include <string>
#include <vector>

namespace torch::jit {
struct Module;
}

namespace tcprof {

struct UserSourceFile {
  std::string file;
  std::string text;
};

// Every file outside torch's own packages that a node of any method (or called function)
// of `module` or its submodules comes from, in the order first seen.
std::vector<UserSourceFile> user_source_files(const torch::jit::Module& module);

}  // namespace tcprof
