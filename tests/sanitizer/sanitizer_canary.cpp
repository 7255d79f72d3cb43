// Makes the sanitizer build prove it is live: each mode commits one error the suite relies on
// ASan, LSan or UBSan to catch (tests/CMakeLists.txt expects the report). If the flags ever stop
// reaching the build, these tests fail instead of the whole suite passing uninstrumented.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// volatile: the optimiser must not see through the values and drop the faulty operations.
volatile int g_index = 8;
volatile int g_big = INT_MAX;
void* volatile g_sink = nullptr;

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "overflow") {
    char* p = static_cast<char*>(std::malloc(8));
    std::memset(p, 0, 8);
    char* volatile q = p;  // hides the size from UBSan's object-size check: ASan must catch it
    q[g_index] = 1;        // one past the end
    std::printf("%d\n", p[0]);
    std::free(p);
  } else if (mode == "leak") {
    g_sink = std::malloc(64);
    g_sink = nullptr;  // the only pointer is gone
  } else if (mode == "undefined") {
    const int x = g_big;
    std::printf("%d\n", x + 1);  // signed overflow
  } else {
    std::fprintf(stderr, "usage: sanitizer_canary overflow|leak|undefined\n");
    return 2;
  }
  return 0;
}
