// Every harness over every file of its corpus (tests/fuzzers/corpus/<name>/): the seeds, and each
// finding of `make fuzz` kept as a regression case. A harness that throws anything but the clear
// tcprof::Error it catches, or crashes, fails here as it did under the fuzzer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzzers/harnesses.h"

namespace tcprof::fuzzers {
namespace {

std::vector<std::string> corpus_of(const std::string& name) {
  std::vector<std::string> files;
  const std::filesystem::path dir = std::filesystem::path(TCPROF_FUZZ_CORPUS) / name;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzRegressions : public ::testing::TestWithParam<Harness> {};

TEST_P(FuzzRegressions, EveryCorpusFileIsReadWithoutAnUnexpectedFailure) {
  const Harness& h = GetParam();
  const std::vector<std::string> files = corpus_of(h.name);
  ASSERT_FALSE(files.empty()) << "no corpus for " << h.name << " in " << TCPROF_FUZZ_CORPUS;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(file);
    EXPECT_NO_THROW(h.fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
}

INSTANTIATE_TEST_SUITE_P(Harnesses, FuzzRegressions, ::testing::ValuesIn(harnesses()),
                         [](const ::testing::TestParamInfo<Harness>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tcprof::fuzzers
