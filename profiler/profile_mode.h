// --profile off|summary|full (issue: profiler). Parsed here so every command spells it the same.
#pragma once
#include <optional>
#include <string_view>

namespace tcprof {

enum class ProfileMode { Off, Summary, Full };

std::optional<ProfileMode> parse_profile_mode(std::string_view text);
std::string_view profile_mode_name(ProfileMode mode);

}  // namespace tcprof
