#pragma once
// Little-endian fields of the authenticated wire formats (the sealed control-message trailer,
// the bootstrap's frame trailer): one definition, so both encode counters and ranks alike.
#include <cstdint>

namespace railcheck::auth {

inline void put_le(std::uint8_t* at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) at[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

inline std::uint64_t get_le(const std::uint8_t* at, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(at[i]) << (8 * i);
  return v;
}

}  // namespace railcheck::auth
