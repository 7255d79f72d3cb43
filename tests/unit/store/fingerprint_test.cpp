#include "ascprof/store/fingerprint.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include "support/test_support.hpp"

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

TEST(Fnv1a64, MatchesPublishedVectors) {
  // Test vectors from the FNV reference (isthe.com/chongo/tech/comp/fnv).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));  // streaming continues the hash
  // the fingerprints' word-wise variant, against the Python recipe in fingerprint.hpp
  EXPECT_EQ(fnv1a64_words(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64_words("foobar"), fnv1a64("foobar"));  // under 8 bytes: byte-wise
  EXPECT_EQ(fnv1a64_words("ascprof-"), 0x106a2d810afb638cull);
  EXPECT_EQ(fnv1a64_words("ascprof-mpi kernel_details.csv"), 0xb751a3b95d1096f9ull);
}

TEST(Fingerprint, SmallFileHashesEverythingAndRecordsSizeAndMtime) {
  ScratchDir dir("store");
  const fs::path f = dir / "kernel_details.csv";
  const std::string content = "Name,Type\n\"MatMul\",\"中文\"\n";
  ascprof::testing::write_text(f, content);
  const auto when = fs::file_time_type::clock::now() - std::chrono::hours(24);
  fs::last_write_time(f, when);
  auto fp = fingerprint_file(f);
  ASSERT_TRUE(fp.ok()) << fp.status().to_string();
  EXPECT_EQ(fp->path, f.string());
  EXPECT_EQ(fp->size, content.size());
  EXPECT_EQ(fp->prefix_hash, fnv1a64_words(content));
  const auto expected_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::file_clock::to_sys(when).time_since_epoch()).count();
  EXPECT_EQ(fp->mtime_ns, expected_ns);
}

TEST(Fingerprint, OnlyTheFirstMebibyteIsHashed) {
  ScratchDir dir("store");
  const fs::path f = dir / "trace_view.json";
  std::string content(kFingerprintPrefixBytes + 1000, 'a');
  for (size_t i = 0; i < content.size(); i += 97) content[i] = static_cast<char>('A' + i % 26);
  ascprof::testing::write_text(f, content);
  auto a = fingerprint_file(f);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->prefix_hash, fnv1a64_words(std::string_view(content).substr(0, kFingerprintPrefixBytes)));
  EXPECT_EQ(a->size, content.size());

  content[kFingerprintPrefixBytes + 10] = '#';  // beyond the prefix: same hash
  ascprof::testing::write_text(f, content);
  auto b = fingerprint_file(f);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->prefix_hash, a->prefix_hash);

  content[10] = '#';  // inside the prefix: different hash
  ascprof::testing::write_text(f, content);
  auto c = fingerprint_file(f);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->prefix_hash, a->prefix_hash);
  EXPECT_FALSE(c->same_content(*a));
}

TEST(Fingerprint, EmptyMissingAndDirectory) {
  ScratchDir dir("store");
  ascprof::testing::write_text(dir / "empty.csv", "");
  auto e = fingerprint_file(dir / "empty.csv");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->size, 0u);
  EXPECT_EQ(e->prefix_hash, fnv1a64_words(""));

  auto m = fingerprint_file(dir / "absent.csv");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kIo);
  EXPECT_EQ(m.status().message(), (dir / "absent.csv").string() + ":fingerprint: No such file or directory");

  auto d = fingerprint_file(dir.path());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("not a regular file"), std::string::npos);
}

TEST(Fingerprint, RealTraceViewLargerThanThePrefix) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const fs::path f =
      ascprof::testing::real_fixtures_dir() / "e2-cnn-level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";
  ASSERT_TRUE(fs::exists(f)) << f;
  std::ifstream in(f, std::ios::binary);
  std::string prefix(kFingerprintPrefixBytes, '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  ASSERT_EQ(static_cast<size_t>(in.gcount()), kFingerprintPrefixBytes) << "fixture should exceed the prefix";
  auto fp = fingerprint_file(f);
  ASSERT_TRUE(fp.ok()) << fp.status().to_string();
  EXPECT_EQ(fp->size, fs::file_size(f));
  EXPECT_EQ(fp->prefix_hash, fnv1a64_words(prefix));
  auto again = fingerprint_file(f);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->same_content(*fp));
}

}  // namespace
}  // namespace ascprof::store
