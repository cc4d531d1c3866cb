// Validation of the communicator shape (comm_shape.hpp).
#include "engine/plan/comm_shape.hpp"

#include <fmt/format.h>

#include <bit>

namespace railcheck::plan {

Result<CommShape> validated(CommShape s) {
  if (s.nranks < 1 || s.nranks > kMaxRanks)
    return Error{fmt::format("nranks = {} is outside [1, {}]", s.nranks, kMaxRanks), ""};
  if (s.coll_channels < 1 || s.coll_channels > kMaxChannels)
    return Error{fmt::format("coll_channels = {} is outside [1, {}]", s.coll_channels, kMaxChannels), ""};
  if (s.p2p_channels < 1 || s.p2p_channels > kMaxChannels || !std::has_single_bit(s.p2p_channels))
    return Error{fmt::format("p2p_channels = {} must be a power of two in [1, {}]", s.p2p_channels, kMaxChannels),
                 "NCCL's ncclP2pChannelForPart masks with p2pnChannels-1"};
  if (!std::has_single_bit(s.p2p_channels_per_peer) || s.p2p_channels_per_peer > s.p2p_channels)
    return Error{fmt::format("p2p_channels_per_peer = {} must be a power of two no larger than p2p_channels = {}",
                             s.p2p_channels_per_peer, s.p2p_channels),
                 ""};
  if (s.work_fifo_depth < 2)
    return Error{fmt::format("work_fifo_depth = {} is too small: a plan gets half of it", s.work_fifo_depth), ""};
  if (s.p2p_chunk_bytes == 0) return Error{"p2p_chunk_bytes must be positive", ""};
  return s;
}

}  // namespace railcheck::plan
