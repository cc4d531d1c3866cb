// p2p channel mapping (p2p_channels.hpp).
#include "engine/plan/p2p_channels.hpp"

#include <algorithm>
#include <bit>

#include "engine/core/engine_assert.hpp"

namespace railcheck::plan {
namespace {

// Reverses the low `bits` bits of v (NCCL's mirrorBits): parts 0,1,2,3 of a 4-channel peer
// land on offsets 0,2,1,3, spreading consecutive parts apart.
std::uint32_t mirror_bits(std::uint32_t v, int bits) {
  std::uint32_t out = 0;
  for (int i = 0; i < bits; ++i) out |= ((v >> i) & 1U) << (bits - 1 - i);
  return out;
}

}  // namespace

std::uint32_t p2p_round_of_send(std::uint32_t rank, std::uint32_t peer, std::uint32_t nranks) {
  return (peer + nranks - rank) % nranks;
}

std::uint32_t p2p_round_of_recv(std::uint32_t rank, std::uint32_t peer, std::uint32_t nranks) {
  return (rank + nranks - peer) % nranks;
}

std::uint32_t p2p_channel(const CommShape& s, std::uint32_t round, std::uint32_t part) {
  RAILCHECK_ASSERT(std::has_single_bit(s.p2p_channels), "NCCL's p2p channel count is a power of two");
  const int log2 = std::countr_zero(s.p2p_channels);
  const std::uint32_t base = round % s.p2p_channels;
  return (base + mirror_bits(part, log2)) & (s.p2p_channels - 1);
}

std::uint32_t p2p_parts(const CommShape& s, std::uint64_t bytes) {
  if (!RAILCHECK_ASSERT(s.p2p_chunk_bytes > 0 && s.p2p_channels_per_peer > 0, "the comm shape was validated")) return 1;
  const std::uint64_t chunks = (bytes + s.p2p_chunk_bytes - 1) / s.p2p_chunk_bytes;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(chunks, 1, s.p2p_channels_per_peer));
}

}  // namespace railcheck::plan
