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
    // splitmix64's finaliser over a running combination: cheap and well mixed.
    std::uint64_t z = (state_ ^ v) + 0x9E3779B97F4A7C15ULL + (state_ << 6) + (state_ >> 2);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    state_ = z ^ (z >> 31);
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

  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 0x243F6A8885A308D3ULL;  // pi's fraction: any fixed non-zero start
};

}  // namespace railcheck
