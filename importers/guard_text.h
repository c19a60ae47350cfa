// Guards and recompile reasons as Dynamo prints them in TORCH_TRACE logs.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tcprof::import {

struct GuardLeaf {
  std::string kind;  // Dynamo's guard type, lowercased: tensor_match, lambda_guard, ...
  std::string expr;
  std::string file;  // as printed: cut from the left ("nn/modules/linear.py")
  int line = 0;
};

// The leaves of a `dynamo_cpp_guards_str` tree ("| +- TENSOR_MATCH: check_tensor(...)  # src  #
// file:line in fn"). Manager and accessor nodes ("GuardManager: source=...") are structure, not
// guards, and are skipped.
std::vector<GuardLeaf> parse_cpp_guards(std::string_view text);

struct RecompileReason {
  std::string compile_label;  // the cache entry whose guard failed, "0/0"
  std::string message;        // "tensor 'x' size mismatch at index 0. expected 4, actual 8"
  std::string guard;          // the failed guard's expression, when the reason prints one
  std::string expected, actual;
  std::string file;           // the user line in the reason ("# ... # file:line in fn"), cut from the left
  int line = 0;
};

// A `recompile_reasons` payload: a JSON list of "F/C: reason" strings (PyTorch 2.6, and 2.11 with
// several reasons) or, with one reason in 2.11, the bare string although it is labelled JSON.
std::vector<RecompileReason> parse_recompile_reasons(const std::string& payload);

}  // namespace tcprof::import
