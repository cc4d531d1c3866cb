#pragma once
// How NCCL 2.28.9 spreads the collectives of one plan over channels (src/enqueue.cc
// scheduleCollTasksToPlan, the non-CollNet branch). The plan's traffic is divided evenly over
// its channels (trafficPerChannel); collectives are cut into cells of about 16 KiB of traffic and
// poured into channels from channel 0 upwards: a collective fills what is left of the current
// channel ("lo"), then whole channels ("mid"), then part of the next ("hi"). So small collectives
// share channel 0 until it is full, and the channels a collective gets depend only on the group's
// collectives: the same on every rank.
#include <cstdint>
#include <string>

namespace railcheck::plan {

// The pour state across the collectives of one plan.
struct CellCursor {
  int channel = 0;                // channelId
  std::uint64_t current = 0;      // currentTraffic on that channel
  std::uint64_t per_channel = 0;  // trafficPerChannel
  int max_channels = 1;           // nMaxChannels[kind] = comm->nChannels
};

struct CellSplit {
  int lo = 0;  // channelLo
  int hi = 0;  // channelHi (inclusive)
};

// trafficPerChannel = max(16 KiB, sum of max(16 KiB, traffic) / min(comm channels, sum of nMaxChannels)).
std::uint64_t traffic_per_channel_2_28(std::uint64_t plan_traffic, int plan_channels);
constexpr std::uint64_t kMinTrafficPerChannel = 16 << 10;  // MinTrafficPerChannel

// Places one collective (count elements of elem_size bytes, traffic_per_byte as in
// ncclFuncTrafficPerByte, x4 for LL) and advances the cursor.
CellSplit place_cells_2_28(CellCursor& cur, std::uint64_t count, std::uint32_t elem_size, int traffic_per_byte,
                           bool ll);

}  // namespace railcheck::plan
