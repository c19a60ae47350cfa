#include "compiler/frontend/machine_state.h"

#include <algorithm>

#include <fmt/format.h>

namespace tcprof {

std::string MachineState::position_key() const {
  // Blocks and nodes are identified by address: stable for the lifetime of the loaded model.
  std::string key;
  for (const auto& s : scopes) {
    key += fmt::format("{}:{}:{}:{};", static_cast<const void*>(s.block), s.index, s.iteration, s.activation);
  }
  for (const auto& a : activations) key += a.module_path + "/" + a.function + ";";
  return key;
}

std::string MachineState::layout_key() const {
  std::string key;
  for (const auto& a : activations) {
    std::vector<std::pair<size_t, const Var*>> entries;
    for (const auto& [value, var] : a.env) entries.emplace_back(value->unique(), var.get());
    std::sort(entries.begin(), entries.end());
    for (const auto& [id, var] : entries) {
      key += var->kind == Var::Kind::Input ? fmt::format("{}=i{},", id, var->slot) : fmt::format("{}=c,", id);
    }
    key += ";";
  }
  return key;
}

}  // namespace tcprof
