#pragma once
// The communicator parameters the host scheduler reads: rank count, channel counts, the work
// FIFO depth and the p2p chunking (NCCL 2.18: comm->nChannels, comm->p2pnChannels,
// comm->p2pnChannelsPerPeer, comm->workFifoDepth, NCCL_P2P_*_CHUNKSIZE).
#include <cstdint>
#include <string>

#include "engine/core/result.hpp"
#include "engine/plan/nccl228_params.hpp"

namespace railcheck::plan {

constexpr std::uint32_t kMaxChannels = 32;  // MAXCHANNELS in 2.18-era src/include/device.h
constexpr std::uint32_t kMaxRanks = 65536;  // a replay bound, not NCCL's

struct CommShape {
  std::uint32_t nranks = 8;
  std::uint32_t coll_channels = 4;             // comm->nChannels: what collectives may use
  std::uint32_t p2p_channels = 4;              // comm->p2pnChannels: a power of two
  std::uint32_t p2p_channels_per_peer = 2;     // comm->p2pnChannelsPerPeer: a power of two
  std::uint32_t work_fifo_depth = 64 * 1024;   // NCCL_WORK_FIFO_DEPTH default
  std::uint64_t p2p_chunk_bytes = 512 * 1024;  // one p2p part carries at most this much
  bool persistent = false;                     // plans captured in a CUDA graph
  Nccl228Params v228;                          // what only the 2.28 model reads
};

// Checks the relations NCCL relies on (powers of two, channel counts within MAXCHANNELS).
Result<CommShape> validated(CommShape s);

}  // namespace railcheck::plan
