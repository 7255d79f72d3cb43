#include "ascprof/common/string_pool.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ascprof {
namespace {

TEST(StringPool, InternsOnceAndViewsStayValid) {
  StringPool pool;
  EXPECT_EQ(pool.intern(""), 0u);
  const StrId a = pool.intern("aclnnMatmul_MatMulV3Common_MatMulV3");
  std::string_view va = pool.view(a);
  for (int i = 0; i < 100000; ++i) pool.intern("k" + std::to_string(i));  // forces many chunks
  EXPECT_EQ(pool.intern("aclnnMatmul_MatMulV3Common_MatMulV3"), a);
  EXPECT_EQ(va, "aclnnMatmul_MatMulV3Common_MatMulV3");
  EXPECT_EQ(pool.size(), 100002u);
  StrId found = 0;
  EXPECT_TRUE(pool.find("k99999", &found));
  EXPECT_FALSE(pool.find("missing", &found));
}

}  // namespace
}  // namespace ascprof
