// NCCL 2.28.9 p2p channel rules (nccl228_p2p.hpp).
#include "engine/plan/nccl228_p2p.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>

namespace railcheck::plan {
namespace {

std::uint32_t reverse_bits(std::uint32_t v, int bits) {
  std::uint32_t out = 0;
  for (int i = 0; i < bits; ++i) out |= ((v >> i) & 1U) << (bits - 1 - i);
  return out;
}

std::uint32_t local_ranks(const CommShape& s) {
  const auto nodes = s.v228.nodes(s.nranks);
  return std::max<std::uint32_t>(1, s.nranks / std::max<std::uint32_t>(1, nodes));
}

// init.cc ncclP2pSchedule: "groupSize = (nNodes > 1) ? NCCL_P2P_SCHEDULE_GROUP_SIZE (8) :
// maxLocalRanks", reduced to a divisor of every node's local ranks.
std::uint32_t sched_group_size(const CommShape& s) {
  const std::uint32_t local = local_ranks(s);
  std::uint32_t g = s.v228.nodes(s.nranks) > 1 ? kMaxP2pPerBatch : local;
  if (local % g != 0 || local < g) g = std::gcd(g, local);
  return g;
}

}  // namespace

std::vector<P2pRound> p2p_schedule_2_28(const CommShape& s, std::uint32_t rank) {
  const std::uint32_t n = s.nranks;
  const std::uint32_t per_node = local_ranks(s);
  const std::uint32_t group_size = sched_group_size(s);
  const std::uint32_t node = rank / per_node;
  const std::uint32_t local_rank = rank % per_node;
  const std::uint32_t local = local_rank % group_size;
  const std::uint32_t groups_per_node = per_node / group_size;
  const std::uint32_t group = local_rank / group_size + node * groups_per_node;
  const std::uint32_t ngroups = n / group_size;
  const std::uint32_t ngroups_pow2 = std::bit_ceil(ngroups);
  // A group's first rank: groups are numbered node by node.
  auto first_rank = [&](std::uint32_t g) {
    return (g / groups_per_node) * per_node + (g % groups_per_node) * group_size;
  };
  std::vector<P2pRound> rounds;
  std::uint32_t group_round = 0, group_delta = 0;
  // "we use the quadratic formula (x*x+x)/2 mod N ... and filter out results greater-eq to n"
  do {
    if (group_delta < ngroups) {
      const std::uint32_t send_group = (group + group_delta) % ngroups;
      const std::uint32_t recv_group = (group + ngroups - group_delta) % ngroups;
      for (std::uint32_t delta = 0; delta < group_size; ++delta) {
        rounds.push_back({first_rank(send_group) + (local + delta) % group_size,
                          first_rank(recv_group) + (local + group_size - delta) % group_size});
      }
    }
    group_round += 1;
    group_delta = (group_delta + group_round) & (ngroups_pow2 - 1);
  } while (group_round != ngroups_pow2);
  return rounds;
}

std::uint32_t p2p_channel_base_2_28(const CommShape& s, std::uint32_t round) {
  std::uint32_t base = round;
  if (s.v228.nodes(s.nranks) > 1) {  // channel.h: rounds of one group epoch share a base
    const std::uint32_t local_size = sched_group_size(s);
    base = (round / local_size) * ((local_size + kMaxP2pPerBatch - 1) / kMaxP2pPerBatch) +
           (round % local_size) / kMaxP2pPerBatch;
  }
  return reverse_bits(base, std::countr_zero(std::bit_ceil(s.p2p_channels)));
}

P2pChannelRange p2p_channel_range_2_28(const CommShape& s) {
  // scheduleP2pTasksToPlan: "Try to use all channels, but one channel per operation."
  P2pChannelRange r;
  r.max = static_cast<int>(s.p2p_channels_per_peer);
  r.min = r.max;
  while (static_cast<std::uint64_t>(r.min) * s.nranks > s.p2p_channels && r.min > 1) r.min /= 2;
  return r;
}

P2pSplit p2p_split_2_28(const CommShape& s, P2pChannelRange range, std::int64_t bytes, bool self) {
  P2pSplit out;
  if (bytes < 0) return out;
  // addP2pToPlan: LL below nChannelsMax x NCCL_P2P_LL_THRESHOLD, never to self.
  const auto threshold = static_cast<std::int64_t>(range.max) * static_cast<std::int64_t>(s.v228.p2p_ll_threshold);
  out.ll = !self && bytes <= threshold;
  const auto step = static_cast<std::int64_t>(out.ll ? s.v228.ll_buff_bytes / 8 : s.v228.p2p_chunk_bytes);
  out.buffer_bytes = out.ll ? s.v228.ll_buff_bytes / 2 : kNcclSteps * s.v228.p2p_chunk_bytes;
  const bool multi_node = s.v228.nodes(s.nranks) > 1;
  out.min_part = multi_node ? step / 2 : step / 8;
  out.max_part = multi_node ? step : step * 32;
  if (bytes == 0) {
    out.channels = 1;
  } else {
    int nc = static_cast<int>(std::min<std::int64_t>(range.min, (bytes + out.min_part - 1) / out.min_part));
    std::int64_t part = std::max(out.min_part, (bytes + nc - 1) / nc);
    while (part > out.max_part && nc <= range.max / 2) {
      nc *= 2;
      part = (bytes + nc - 1) / nc;
    }
    out.channels = nc;
  }
  return out;
}

std::string describe(const P2pSplit& split, std::int64_t bytes, P2pChannelRange range) {
  return fmt::format("enqueue.cc addP2pToPlan: {} B {} over {} channel{} (parts of {}..{} B, {}..{} channels)", bytes,
                     split.ll ? "LL" : "Simple", split.channels, split.channels == 1 ? "" : "s", split.min_part,
                     split.max_part, range.min, range.max);
}

}  // namespace railcheck::plan
