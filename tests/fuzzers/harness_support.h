// What the harnesses share: the input as a file (the readers take paths), in a folder of this
// process's own that lives as long as the process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tcprof::fuzzers {

// <a temporary folder of this process>/<name>, holding exactly these bytes.
std::string write_input(const std::string& name, const uint8_t* data, size_t size);
std::string write_input(const std::string& name, std::string_view bytes);
// A path in that folder that does not exist (it is removed first, with its -wal and -shm).
std::string fresh_path(const std::string& name);

}  // namespace tcprof::fuzzers
