// Loads a TorchScript archive (torch.jit.save) with clear errors for every way it can be wrong.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>

namespace tcprof {

struct LoadedModel {
  std::string path;
  std::string sha256;
  std::string method;
  torch::jit::Module module;
  std::vector<std::string> argument_names;  // without self
  std::vector<c10::TypePtr> argument_types;
};

// Throws Error(Input) for a missing file, a file that is not a zip, an archive that is not
// TorchScript or is truncated, and Error(Usage) for a method the model does not have.
LoadedModel load_model(const std::string& path, const std::string& method = "forward");

// A module already in memory (the C++ API); `name` stands for its path, and it has no sha256.
// Throws Error(Usage) for a method the module does not have.
LoadedModel model_from_module(torch::jit::Module module, const std::string& name,
                              const std::string& method = "forward");

}  // namespace tcprof
