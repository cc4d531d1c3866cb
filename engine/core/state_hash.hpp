#pragma once
// A 64-bit fingerprint of a state, for the model checker's visited set. Each component feeds
// its own fields, in a fixed order, through `add`; two states that behave the same from here on
// must feed the same sequence. Collisions are possible in principle (hash compaction: with 10^7
// states the chance of one is about 3e-6), which can only make the checker skip a state, never
// report a false violation; docs/verify.md says so.
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "engine/core/ids.hpp"
#include "engine/core/time.hpp"

namespace railcheck {

// Whether a component hashes the counters it hands fresh ids out of (HaConnection::hash_state).
enum class IdCounters : std::uint8_t { Hash, Omit };

class StateHasher {
 public:
  void add(std::uint64_t v) {
    // wyhash's multiply-and-fold: one 64x64->128-bit multiply and an xor per word, ~5 cycles on
    // the serial chain where splitmix64's finaliser took ~15 (hashing was a quarter of a
    // checker run, perf 2026-11-25). The constants keep a zero word or state from absorbing
    // the rest: a factor is zero only when the state or v equals one of them exactly.
    const u128 m = static_cast<u128>(state_ ^ kStateKey) * (v ^ kWordKey);
    state_ = static_cast<std::uint64_t>(m) ^ static_cast<std::uint64_t>(m >> 64);
  }
  void add(bool v) { add(static_cast<std::uint64_t>(v ? 1 : 2)); }
  void add(double v) { add(static_cast<std::uint64_t>(v * 1e6)); }
  void add(Nanos t) { add(static_cast<std::uint64_t>(t.count())); }
  void add(std::string_view s) {
    add(static_cast<std::uint64_t>(s.size()));
    for (const char c : s) add(static_cast<std::uint64_t>(static_cast<unsigned char>(c)));
  }
  template <typename Tag, typename Rep>
  void add(StrongId<Tag, Rep> id) {
    add(static_cast<std::uint64_t>(id.value));
  }
  template <typename E>
    requires std::is_enum_v<E>
  void add(E e) {
    add(static_cast<std::uint64_t>(e));
  }
  template <typename T>
    requires std::is_integral_v<T>
  void add(T v) {
    add(static_cast<std::uint64_t>(v));
  }
  template <typename T>
  void add(const std::optional<T>& o) {
    add(o.has_value());
    if (o) add(*o);
  }

  // splitmix64's finaliser once at the end, so every bit of the fingerprint depends on every
  // bit of the state (the visited set indexes by the low bits).
  std::uint64_t value() const {
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  __extension__ typedef unsigned __int128 u128;  // GCC and Clang; __extension__ for -Wpedantic
  static constexpr std::uint64_t kStateKey = 0xA0761D6478BD642FULL;  // wyhash's secrets
  static constexpr std::uint64_t kWordKey = 0xE7037ED1A0B428DBULL;
  std::uint64_t state_ = 0x243F6A8885A308D3ULL;  // pi's fraction: any fixed non-zero start
};

}  // namespace railcheck
