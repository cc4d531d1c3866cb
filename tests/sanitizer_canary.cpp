// A program with two bugs the sanitizer trees must report: proof that the sanitizers are on and
// that the UBSan ignorelist for third-party headers (cmake/ubsan-third-party.ignore) leaves our
// own code checked and ASan's checks inside the standard library in place. CTest runs it in
// each sanitizer tree and passes only when the report names the bug.
//   sanitizer_canary signed-overflow   UBSan: signed integer overflow in this file
//   sanitizer_canary vector-overflow   ASan: heap-buffer-overflow through std::vector::operator[]
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// volatile: the compiler must not fold the bug away at compile time.
volatile int g_big = INT_MAX;
volatile std::size_t g_past_end = 4;

int add_one(int x) { return x + 1; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s signed-overflow|vector-overflow\n", argv[0]);
    return 2;
  }
  if (std::strcmp(argv[1], "signed-overflow") == 0) return add_one(g_big) == 0 ? 0 : 3;
  if (std::strcmp(argv[1], "vector-overflow") == 0) {
    std::vector<int> v(4, 1);
    return v[g_past_end] == 1 ? 0 : 3;
  }
  std::fprintf(stderr, "unknown bug '%s'\n", argv[1]);
  return 2;
}
