// Channel count of a collective (channel_count.hpp).
#include "engine/plan/channel_count.hpp"

#include <algorithm>

namespace railcheck::plan {

std::uint64_t bytes_per_channel(const CommShape& s, std::uint64_t group_coll_bytes) {
  std::uint64_t per = kAggChannelSize * std::min<std::uint64_t>(16, s.nranks);
  while (group_coll_bytes < per * s.coll_channels && per > kMinChannelSize) per /= 2;
  return per;
}

std::uint32_t coll_channel_count(const CommShape& s, const CollTask& t, std::uint64_t bytes_per_channel) {
  if (t.channels != 0) return std::min(t.channels, s.coll_channels);
  // A logged channel range is the count NCCL really used.
  if (t.logged_lo >= 0) return std::min(static_cast<std::uint32_t>(t.logged_hi - t.logged_lo + 1), s.coll_channels);
  const std::uint64_t n = (t.bytes() + bytes_per_channel - 1) / bytes_per_channel;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(n, 1, s.coll_channels));
}

}  // namespace railcheck::plan
