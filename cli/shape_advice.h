// Shape advice (analysis/shape_advice.h) as `tcprof report` prints it: text and JSON.
#pragma once
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/shape_advice.h"

namespace tcprof::cli {

void write_shape_advice_text(fmt::memory_buffer& out, const analysis::ShapeAdvice& advice);
nlohmann::json shape_advice_json(const analysis::ShapeAdvice& advice);

}  // namespace tcprof::cli
