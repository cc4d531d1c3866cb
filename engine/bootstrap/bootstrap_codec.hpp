#pragma once
// Wire format v1 of the bootstrap's frames. All integers little-endian, written and read byte
// by byte (never a struct image); every length is checked against the bounds in
// bootstrap_message.hpp before anything is allocated.
//
// Frame header (20 bytes):
//   offset size field
//        0    4 magic       "RCBS" = 0x53424352 (ASCII in wire order, so a hex dump names it)
//        4    1 version     1
//        5    1 type        1 CheckIn, 2 RingNeighbour, 3 RingHello, 4 RingBlock, 5 Abort, 6 RingDone
//        6    2 reserved    0
//        8    8 run_id      the run this frame belongs to (NCCL's bootstrap `magic`)
//       16    4 length      payload bytes that follow; must match the type's layout exactly
//
// Payloads (offsets from the payload start):
//   CheckIn        0 rank u32 | 4 nranks u32 | 8 blob_size u32 | 12 addr_len u16 | 14 addr
//   RingNeighbour  0 next_rank u32 | 4 nranks u32 | 8 addr_len u16 | 10 addr
//   RingHello      0 from_rank u32 | 4 to_rank u32
//   RingBlock      0 step u32 | 4 origin_rank u32 | 8 blob_len u32 | 12 blob
//   Abort          0 from_rank u32 | 4 reason u8 | 5 reserved u8 (0) | 6 text_len u16 | 8 text
//   RingDone       0 from_rank u32
// Addresses and abort text are printable ASCII (0x20..0x7e), so they can go into one log line.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/bootstrap/bootstrap_message.hpp"
#include "engine/core/result.hpp"

namespace railcheck::bootstrap {

namespace frame_wire {
constexpr std::uint32_t kMagic = 0x53424352;  // "RCBS"
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kHeaderSize = 20;
constexpr std::size_t kMagicOffset = 0;
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kTypeOffset = 5;
constexpr std::size_t kReservedOffset = 6;
constexpr std::size_t kRunIdOffset = 8;
constexpr std::size_t kLengthOffset = 16;
// The largest payload any message can have: a RingBlock of kMaxBlobSize.
constexpr std::size_t kMaxPayload = 12 + kMaxBlobSize;
}  // namespace frame_wire

std::vector<std::uint8_t> encode_frame(const Frame& f);

struct DecodedFrame {
  Frame frame;
  std::size_t consumed = 0;  // header + payload bytes this frame took from the front
};

// Decodes the frame at the front of `buffered` (bytes received so far on one connection).
// nullopt: not enough bytes yet. An Error: the bytes are not a valid v1 frame (the connection
// is then unusable: the stream has lost its framing). The header is judged as soon as it is
// complete, so a stranger's bytes are rejected without waiting for a bogus length.
Result<std::optional<DecodedFrame>> decode_frame(std::span<const std::uint8_t> buffered);

}  // namespace railcheck::bootstrap
