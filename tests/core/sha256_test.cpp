// SHA-256 known answers: the FIPS 180-2 examples, the padding boundaries (55, 56 and 64 bytes:
// one or two final blocks) checked against coreutils' sha256sum, and the file form.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <random>

#include "core/error.h"
#include "core/sha256.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  EXPECT_EQ(sha256_hex(std::string(55, 'x')), "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  EXPECT_EQ(sha256_hex(std::string(56, 'x')), "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
  EXPECT_EQ(sha256_hex(std::string(64, 'x')), "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
}

TEST(Sha256, PortableCodeGivesTheKnownAnswers) {
  EXPECT_EQ(sha256_hex_portable("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex_portable(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex_portable(std::string(56, 'x')), "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
}

// Where the CPU has SHA instructions, every length around the block and padding edges, and
// random contents, hash alike through both code paths (elsewhere both calls take the same path).
TEST(Sha256, CpuInstructionsAgreeWithThePortableCode) {
  std::mt19937 rng(20261126);
  std::string data(70000, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  for (size_t n = 0; n <= 260; ++n) {
    ASSERT_EQ(sha256_hex(data.substr(0, n)), sha256_hex_portable(data.substr(0, n))) << n << " bytes";
  }
  for (size_t n : {4095u, 4096u, 65537u, 70000u}) {
    ASSERT_EQ(sha256_hex(data.substr(0, n)), sha256_hex_portable(data.substr(0, n))) << n << " bytes";
  }
  std::cout << "[ info ] SHA-256 through " << (sha256_uses_cpu_instructions() ? "the CPU's SHA instructions" : "portable code")
            << "\n";
}

TEST(Sha256, FileDigestEqualsDataDigestAndMissingFileIsAnInputError) {
  testing::TempDir dir;
  std::string data(3000000, '\0');  // several 1 MiB reads, the last one partial
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + 7);
  std::ofstream(dir.file("blob"), std::ios::binary) << data;
  EXPECT_EQ(sha256_file(dir.file("blob")), sha256_hex(data));
  try {
    sha256_file(dir.file("missing"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
  }
}

}  // namespace
}  // namespace tcprof
