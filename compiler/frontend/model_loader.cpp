#include "compiler/frontend/model_loader.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <torch/script.h>

#include "core/error.h"
#include "core/sha256.h"

namespace tcprof {
namespace {

std::string first_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

// The method's arguments (without self); Error(Usage) when the module has no such method.
void describe_method(LoadedModel& model) {
  auto found = model.module.find_method(model.method);
  if (!found) {
    std::string names;
    for (const auto& m : model.module.get_methods()) names += (names.empty() ? "" : ", ") + m.name();
    throw Error(ErrorKind::Usage, fmt::format("model '{}' has no method '{}' (it has: {})", model.path, model.method,
                                              names.empty() ? "none" : names));
  }
  const auto& schema = found->function().getSchema();
  for (size_t i = 1; i < schema.arguments().size(); ++i) {
    model.argument_names.push_back(schema.arguments()[i].name());
    model.argument_types.push_back(schema.arguments()[i].type());
  }
}

}  // namespace

LoadedModel load_model(const std::string& path, const std::string& method) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw Error(ErrorKind::Input, fmt::format("model '{}' does not exist", path));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ErrorKind::Input, fmt::format("model '{}' is a directory, not a TorchScript file", path));
  }
  {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    if (in.gcount() < 4 || magic[0] != 'P' || magic[1] != 'K') {
      throw Error(ErrorKind::Input,
                  fmt::format("'{}' is not a TorchScript archive (not a zip file): save the model with "
                              "torch.jit.save(torch.jit.script(model), path)",
                              path));
    }
  }
  LoadedModel model;
  model.path = path;
  model.method = method;
  model.sha256 = sha256_file(path);
  try {
    model.module = torch::jit::load(path);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Input,
                fmt::format("'{}' could not be loaded as a TorchScript archive (truncated or not "
                            "saved with torch.jit.save): {}",
                            path, first_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Input, fmt::format("'{}' could not be loaded: {}", path, first_line(e.what())));
  }
  describe_method(model);
  return model;
}

LoadedModel model_from_module(torch::jit::Module module, const std::string& name, const std::string& method) {
  LoadedModel model;
  model.path = name;
  model.method = method;
  model.module = std::move(module);
  describe_method(model);
  return model;
}

}  // namespace tcprof
