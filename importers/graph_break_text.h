// The text of a `dynamo_graph_break_reason` artifact turned into tcprof's break fields.
// PyTorch 2.11 writes "Graph break in user code at FILE:LINE", "Graph Break Reason: ...", the
// registry title, "Explanation:", "Hint:" lines, a link ending in gb/gbNNNN.html and the user
// code traceback; 2.6 writes "Reason: Unsupported: ..." without a registry id.
#pragma once
#include <string>
#include <string_view>

#include "core/events.h"

namespace tcprof::import {

// Dynamo's registry id ("GB0059") or text mapped to tcprof's break type (PRODUCT.md):
// GB0059 print/warn: side_effect; GB0170: data_dependent_branch; GB0124: scalar_output;
// GB0036: dynamic_output_shape; anything else: unsupported_op.
std::string break_type_for(const std::string& gb_id, std::string_view text);

// Fills type, break_id (the upstream GB id, empty when the log has none), op, reason, hint, file,
// line, source and stack_json. file:line is the break site when it is the user's code; when the
// site is inside a library (torch under DDP, say) it is the innermost user frame instead, and the
// site stays first in the reason.
GraphBreakEvent parse_graph_break(std::string_view text);

// True for frames of installed packages and the standard library: not the user's code.
bool is_library_path(std::string_view file);

}  // namespace tcprof::import
