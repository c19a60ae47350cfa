#include "compiler/runtime/compile_options.h"

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof {

namespace {
struct StanceName {
  Stance stance;
  const char* name;
};
constexpr StanceName kStances[] = {
    {Stance::Default, "default"},
    {Stance::ForceEager, "force_eager"},
    {Stance::EagerOnRecompile, "eager_on_recompile"},
    {Stance::FailOnRecompile, "fail_on_recompile"},
    {Stance::EagerThenCompile, "eager_then_compile"},
};
}  // namespace

Stance parse_stance(const std::string& name) {
  for (const auto& s : kStances) {
    if (name == s.name) return s.stance;
  }
  throw Error(ErrorKind::Usage,
              fmt::format("unknown stance '{}' (use default, force_eager, eager_on_recompile, "
                          "fail_on_recompile or eager_then_compile)",
                          name));
}

std::string stance_name(Stance stance) {
  for (const auto& s : kStances) {
    if (s.stance == stance) return s.name;
  }
  return "default";
}

}  // namespace tcprof
