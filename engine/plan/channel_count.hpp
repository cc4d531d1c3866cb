#pragma once
// How many channels (nBid) a collective gets when the trace does not say (NCCL logs never do).
// After 2.18 scheduleCollTasksToPlan without CollNet: bytePerChannel starts at
// NCCL_AGG_CHANNEL_SIZE * min(16, nranks) and halves while the group's collective bytes would
// not fill every channel and it is above NCCL_MIN_CHANNEL_SIZE; a collective then takes
// divUp(bytes, bytePerChannel) channels, clamped to [1, nChannels]. A trace's `channels` or a
// logged TUNING range (CollTask::logged_lo/hi) takes precedence. It depends only on the
// group's collectives, which every rank shares, so it never causes divergence by itself.
#include <cstdint>

#include "engine/plan/comm_shape.hpp"
#include "engine/plan/task.hpp"

namespace railcheck::plan {

constexpr std::uint64_t kAggChannelSize = 1ULL << 21;  // NCCL_AGG_CHANNEL_SIZE
constexpr std::uint64_t kMinChannelSize = 8 * 64;      // NCCL_MIN_CHANNEL_SIZE = LL threshold * 64

std::uint64_t bytes_per_channel(const CommShape& s, std::uint64_t group_coll_bytes);
std::uint32_t coll_channel_count(const CommShape& s, const CollTask& t, std::uint64_t bytes_per_channel);

}  // namespace railcheck::plan
