#pragma once
// Where p2p work goes. NCCL pairs, in round i, the send to rank+i with the receive from rank-i
// (the p2p schedule), and maps (round, part) to a channel with no regard to load:
//   base(round) = round mod p2pnChannels            (single-node branch of
//                                                     ncclP2pChannelBaseForRound)
//   channel     = (base + mirrorBits(part, log2 p2pnChannels)) & (p2pnChannels - 1)
//                                                    (ncclP2pChannelForPart)
// Both ends of a transfer compute the same round (peer distance), hence the same channel.
#include <cstdint>

#include "engine/plan/comm_shape.hpp"

namespace railcheck::plan {

std::uint32_t p2p_round_of_send(std::uint32_t rank, std::uint32_t peer, std::uint32_t nranks);
std::uint32_t p2p_round_of_recv(std::uint32_t rank, std::uint32_t peer, std::uint32_t nranks);
std::uint32_t p2p_channel(const CommShape& s, std::uint32_t round, std::uint32_t part);
// How many parts (channels) a transfer of `bytes` uses: one per chunk, at most
// p2pnChannelsPerPeer, at least one (a zero-byte send still synchronises).
std::uint32_t p2p_parts(const CommShape& s, std::uint64_t bytes);

}  // namespace railcheck::plan
