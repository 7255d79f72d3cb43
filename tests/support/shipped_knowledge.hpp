#pragma once
// The shipped knowledge/ rules, loaded once per test binary; a load failure fails the first test
// that asks (and names the file and line).
#include <gtest/gtest.h>

#include <utility>

#include "ascprof/knowledge/knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::testing {

inline const knowledge::Knowledge& shipped_knowledge() {
  static const knowledge::Knowledge k = [] {
    auto r = knowledge::Knowledge::load(knowledge_dir());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return std::move(r).value();
  }();
  return k;
}

}  // namespace ascprof::testing
