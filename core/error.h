// Errors that reach the user. Each carries a kind so the CLI can map it to an exit code
// (PRODUCT.md: 1 = the thing checked failed, 2 = usage or input error).
#pragma once
#include <stdexcept>
#include <string>

namespace tcprof {

enum class ErrorKind {
  Usage,     // wrong flags or arguments
  Input,     // a file or spec the user gave is unusable (missing, corrupt, wrong schema)
  Check,     // a gate, verification or stance failed on purpose
  Internal,  // a bug or an environment failure
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

inline int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Check: return 1;
    case ErrorKind::Usage:
    case ErrorKind::Input: return 2;
    case ErrorKind::Internal: return 3;
  }
  return 3;
}

}  // namespace tcprof
