#pragma once
/// Tiny helpers shared by the fuzz targets: an invariant check that aborts (so libFuzzer records the
/// input as a crash) with a readable message.
#include <cstdio>
#include <cstdlib>

/// Aborts with "fuzz invariant failed: WHAT" when `cond` is false.
#define FUZZ_CHECK(cond, what)                                                       \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)
