#pragma once
// The one option of the libfabric benches: --quick (a tenth of the messages, for a smoke run or
// a profile's baseline). --help prints `usage` and exits 0; anything else is exit 2, not a full
// run the caller did not ask for.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace railcheck::bench {

inline bool quick_flag(int argc, char** argv, const char* usage) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: %s [--quick]\n%s\n", argv[0], usage);
      std::exit(0);
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s' (usage: %s [--quick])\n", argv[0], argv[i], argv[0]);
      std::exit(2);
    }
  }
  return quick;
}

}  // namespace railcheck::bench
