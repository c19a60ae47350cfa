// Durations in the sentences analysis/ writes (problems, compile-time advice), three significant
// digits as `report` prints them: "812 ns", "12.4 us", "3.21 ms", "1.52 s".
#pragma once
#include <string>

namespace tcprof::analysis {

std::string duration_text(double ns);

}  // namespace tcprof::analysis
