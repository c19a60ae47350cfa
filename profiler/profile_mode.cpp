#include "profiler/profile_mode.h"

namespace tcprof {

std::optional<ProfileMode> parse_profile_mode(std::string_view text) {
  if (text == "off") return ProfileMode::Off;
  if (text == "summary") return ProfileMode::Summary;
  if (text == "full") return ProfileMode::Full;
  return std::nullopt;
}

std::string_view profile_mode_name(ProfileMode mode) {
  switch (mode) {
    case ProfileMode::Off: return "off";
    case ProfileMode::Summary: return "summary";
    case ProfileMode::Full: return "full";
  }
  return "off";
}

}  // namespace tcprof
