// SHA-256 of a file, to identify the exact model a run used (runs.model_sha256).
#pragma once
#include <string>

namespace tcprof {

// Lowercase hex digest; throws Error(Input) when the file cannot be read.
std::string sha256_file(const std::string& path);
std::string sha256_hex(const std::string& data);

// The specification's code path, whatever the CPU offers: for tests that compare the two.
std::string sha256_hex_portable(const std::string& data);
// True where the CPU's SHA instructions compute the hashes (x86 SHA-NI).
bool sha256_uses_cpu_instructions();

}  // namespace tcprof
