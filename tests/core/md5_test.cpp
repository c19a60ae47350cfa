// MD5 known answers: RFC 1321's test suite (appendix A.5), the padding boundaries (55, 56, 63,
// 64 and 65 bytes) checked against coreutils' md5sum, and feeding in pieces.
#include <gtest/gtest.h>

#include "core/md5.h"

namespace tcprof {
namespace {

TEST(Md5, Rfc1321Suite) {
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5_hex("a"), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(md5_hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(md5_hex("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(md5_hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            "d174ab98d277d9f5a5611c2c9f419d9f");
  EXPECT_EQ(md5_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Md5, PaddingBoundaries) {
  EXPECT_EQ(md5_hex(std::string(55, 'x')), "04364420e25c512fd958a70738aa8f72");
  EXPECT_EQ(md5_hex(std::string(56, 'x')), "668a72d5ba17f08e62dabcafad6db14b");
  EXPECT_EQ(md5_hex(std::string(63, 'x')), "7dc2ca208106a2f703567bdff99d8981");
  EXPECT_EQ(md5_hex(std::string(64, 'x')), "c1bb4f81d892b2d57947682aeb252456");
  EXPECT_EQ(md5_hex(std::string(65, 'x')), "1bc932052302d074bdec39795fe00cf6");
}

TEST(Md5, PiecesGiveTheSameDigestAsTheWhole) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + "\n";
  Md5 md5;
  for (size_t at = 0; at < text.size(); at += 37) md5.update(std::string_view(text).substr(at, 37));
  EXPECT_EQ(md5.hex_digest(), md5_hex(text));
}

}  // namespace
}  // namespace tcprof
