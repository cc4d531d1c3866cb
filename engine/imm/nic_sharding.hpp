#pragma once
// Spreading a write over a GPU's NICs (seed "支持多网卡聚合": EFA gives a p5 GPU 4x100 Gb/s and
// a p5en GPU 2x200 Gb/s, so one NIC cannot reach ConnectX-7's 400 Gb/s). Every piece is one
// WRITE_IMM on one NIC carrying the transfer's immediate, so the receiver expects exactly as
// many arrivals as there are pieces for it.
//
// Zero-length rule: a piece that would carry 0 bytes is not posted. The seed's EFA failure came
// from such a piece: splitting a write smaller than NICs x MTU evenly left the last NICs with
// 0-length WRITEs whose remote offset sat exactly at the end of the memory region, an address
// EFA rejected (the spec does not require validating it). Skipping rather than clamping the
// offset keeps "pieces posted == immediates expected" and costs no work request or CQE.
#include <cstdint>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/imm/write_shape.hpp"

namespace railcheck::imm {

enum class ShardBy : std::uint8_t {
  Bytes,      // every extent split evenly over all NICs, in whole MTUs
  Pages,      // extents dealt whole, extent i to NIC i mod n (KV-cache pages)
  Receivers,  // every extent of receiver r on NIC r mod n (MoE scatter)
  Pinned,     // everything on the NIC the caller names
};

struct ShardRule {
  ShardBy by = ShardBy::Bytes;
  std::uint32_t nics = 1;
  std::uint32_t mtu = 4096;
  std::uint32_t pinned_nic = 0;
  // Longest WRITE_IMM posted (0: no limit). A longer piece becomes consecutive pieces on the same
  // NIC, so a large write keeps several writes in flight per QP.
  std::uint64_t max_piece_bytes = 0;
};

struct WritePiece {
  std::uint32_t nic = 0;
  std::uint32_t receiver = 0;
  std::uint32_t extent = 0;  // Extent::index it came from
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t length = 0;  // never 0
};

// Checks every extent against the regions (an error names the extent and the bound), then
// shards. Every piece has length > 0 and lies inside both regions.
Result<std::vector<WritePiece>> shard_write(const WriteShape& shape, const Regions& regions, const ShardRule& rule);

// Pieces addressed to `receiver`: what its ImmCounter must expect.
std::uint32_t pieces_for(const std::vector<WritePiece>& pieces, std::uint32_t receiver);

}  // namespace railcheck::imm
