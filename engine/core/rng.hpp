#pragma once
// The one source of randomness. Drivers own a SeededRng built from the run's seed; the engine
// never draws randomness of its own. splitmix64: tiny, fast, and identical on every platform
// (std::mt19937 is too, but its distributions are not).
#include <cstdint>

namespace railcheck {

class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) without modulo bias worth caring about for bound << 2^64.
  std::uint64_t below(std::uint64_t bound) { return bound == 0 ? 0 : next_u64() % bound; }
  // Uniform in [0, 1).
  double unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // A child stream, so adding draws in one component does not shift another's.
  SeededRng fork(std::uint64_t stream) { return SeededRng(next_u64() ^ (stream * 0xD1B54A32D192ED03ULL)); }

 private:
  std::uint64_t state_;
};

}  // namespace railcheck
