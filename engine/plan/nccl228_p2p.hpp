#pragma once
// NCCL 2.28.9's p2p channel rules: which peer each round pairs (src/init.cc ncclP2pSchedule),
// which channel a round starts on (src/include/channel.h ncclP2pChannelBaseForRound, device.h
// ncclP2pChannelForPart), and over how many channels one direction of a transfer is split
// (src/enqueue.cc scheduleP2pTasksToPlan's nChannelsMin/Max and addP2pToPlan's part sizes).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/plan/comm_shape.hpp"

namespace railcheck::plan {

// NCCL_STEPS (src/include/device.h): the slots of a connection's buffer.
inline constexpr std::uint64_t kNcclSteps = 8;

// NCCL_MAX_DEV_WORK_P2P_PER_BATCH (src/include/device.h): p2p operations one plan batch holds.
inline constexpr std::uint32_t kMaxP2pPerBatch = 8;

struct P2pRound {
  std::uint32_t send_to = 0;
  std::uint32_t recv_from = 0;
};

// comm->p2pSchedule of `rank`: nranks rounds. Ranks are laid out node by node, nranks/nnodes
// per node (every recording and every trace here).
std::vector<P2pRound> p2p_schedule_2_28(const CommShape& s, std::uint32_t rank);

// The channel that part 0 of a round uses; part k uses (base + k) mod p2p_channels.
std::uint32_t p2p_channel_base_2_28(const CommShape& s, std::uint32_t round);

// nChannelsMin and nChannelsMax of scheduleP2pTasksToPlan.
struct P2pChannelRange {
  int min = 1;
  int max = 1;
};
P2pChannelRange p2p_channel_range_2_28(const CommShape& s);

// addP2pToPlan: how many channels one direction of `bytes` is split over (0 when absent), and
// its protocol; `self` is a send to or receive from this rank itself.
struct P2pSplit {
  int channels = 0;
  bool ll = false;
  std::int64_t min_part = 0;  // minPartSize
  std::int64_t max_part = 0;  // maxPartSize
  // A connection's buffer: NCCL_STEPS x comm->p2pChunkSize under Simple (init.cc keeps the
  // chunk at most buffSize / NCCL_STEPS), half the LL buffer under LL (8 data bytes a 16 B line).
  std::uint64_t buffer_bytes = 0;
};
P2pSplit p2p_split_2_28(const CommShape& s, P2pChannelRange range, std::int64_t bytes, bool self);

// The rule behind a split, for reports.
std::string describe(const P2pSplit& split, std::int64_t bytes, P2pChannelRange range);

}  // namespace railcheck::plan
