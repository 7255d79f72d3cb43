#include "ascprof/common/blake2b.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ascprof {
namespace {

// Expected digests computed with Python's hashlib.blake2b (the reference tool's hash).
TEST(Blake2b, MatchesPythonHashlib) {
  EXPECT_EQ(blake2b_hex("abc", 64),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923");
  EXPECT_EQ(blake2b_hex("", 8), "e4a6a0577479b2b4");
  EXPECT_EQ(blake2b_hex(std::string(300, 'x'), 16), "c2f093e41879e412280bfcc0ed6533e4");
  EXPECT_EQ(blake2b_hex(std::string(128, 'a'), 8), "f06643fe9c7e18da");  // exactly one block
  EXPECT_EQ(blake2b_hex("\"32,3,224,224\" \"32,1,224,224,8\"", 8), "b79a7702bc96884f");
}

}  // namespace
}  // namespace ascprof
