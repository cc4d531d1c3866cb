#pragma once
// The connection handle: what an NCCL net plugin's listen() writes and the peer's connect()
// reads (seed §3.2, phase 1). NCCL copies it between ranks as an opaque buffer of
// NCCL_NET_HANDLE_MAXSIZE = 128 bytes, so it holds only fields that mean the same thing on
// another host (QpEndpoint: qpn, gid, lid, psn) and is an explicit codec, never a struct image.
//
// Wire format v1 (all integers little-endian, written and read byte by byte):
//
//   offset size field
//        0    4 magic     "RCHA" = 0x41484352 (HA handle) or "RCSP" = 0x50534352 (single path)
//        4    1 version   1
//        5    1 flags     bit0 = dual path; bits 1..7 reserved, must be 0
//        6    2 reserved  0
//        8    4 qpn       must fit 24 bits (kQpnMask)
//       12   16 gid       raw bytes, network order as the verbs API gives them
//       28    2 lid
//       30    2 reserved  0
//       32    4 psn       must fit 24 bits (kPsnMask)
//       36    4 crc32     CRC-32/ISO-HDLC (zlib's) over bytes [0, 36)
//       40   88 zero      up to kHandleMaxSize; must be zero
//
// Magic: the ASCII bytes of "RCHA" / "RCSP" in wire order, so a hex dump names the layout.
// (The seed's `0xHA000001` is not a valid literal.) Magic and version sit at fixed offsets in
// every version; everything after them is defined by the version.
//
// Which peer sent it — the rule for a magic that is not ours:
//   * "RCHA", checksum valid                     -> HaCapable, dual_path as flagged.
//   * any other magic, checksum and layout valid -> SinglePathOnly, dual_path forced false.
//     "RCSP" is what encode_single_path_handle() writes; the issue's "a wrong magic degrades to
//     single-path mode" is read as: the bytes are intact v1 layout, only the peer is not HA.
//   * a magic other than "RCHA"/"RCSP" whose checksum fails -> rejected, "unknown magic": the
//     bytes are not a railcheck handle at all (or are garbled), and nothing in them can be
//     trusted enough to degrade on.
//   * "RCHA"/"RCSP" whose checksum fails -> rejected, "checksum mismatch".
// Every other violation (size, version, non-zero reserved or trailing bytes, qpn/psn wider
// than 24 bits) is rejected with an Error naming the field, its value, and what was expected.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "engine/core/qp_endpoint.hpp"
#include "engine/core/result.hpp"

namespace railcheck {

constexpr std::size_t kHandleMaxSize = 128;  // NCCL_NET_HANDLE_MAXSIZE

struct ConnectionHandle {
  bool dual_path = false;  // the listener has standby paths and speaks the phase-2 exchange
  QpEndpoint primary;
  bool operator==(const ConnectionHandle&) const = default;
};

enum class HandlePeerKind : std::uint8_t {
  HaCapable,
  SinglePathOnly,  // the peer did not use our HA magic: one path, no failover
};

struct DecodedHandle {
  ConnectionHandle handle;
  HandlePeerKind peer = HandlePeerKind::HaCapable;
};

// Offsets and constants of wire format v1 (see the table above).
namespace handle_wire {
constexpr std::uint32_t kMagicHa = 0x41484352;          // "RCHA"
constexpr std::uint32_t kMagicSinglePath = 0x50534352;  // "RCSP"
constexpr std::uint8_t kVersion = 1;
constexpr std::uint8_t kFlagDualPath = 0x01;

constexpr std::size_t kMagicOffset = 0;
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kFlagsOffset = 5;
constexpr std::size_t kReserved0Offset = 6;
constexpr std::size_t kQpnOffset = 8;
constexpr std::size_t kGidOffset = 12;
constexpr std::size_t kLidOffset = 28;
constexpr std::size_t kReserved1Offset = 30;
constexpr std::size_t kPsnOffset = 32;
constexpr std::size_t kCrcOffset = 36;
constexpr std::size_t kEnd = 40;
}  // namespace handle_wire

constexpr std::size_t kHandleWireSize = handle_wire::kEnd;  // bytes v1 uses
static_assert(kHandleWireSize <= kHandleMaxSize, "the handle must fit NCCL_NET_HANDLE_MAXSIZE");

// CRC-32/ISO-HDLC (the zlib/Ethernet CRC: reflected polynomial 0xEDB88320, init and final xor
// 0xFFFFFFFF). crc32_iso_hdlc("123456789") == 0xCBF43926.
std::uint32_t crc32_iso_hdlc(std::span<const std::uint8_t> bytes);

// Writes the v1 encoding into the first kHandleWireSize bytes and zero-fills the rest of `out`.
// qpn and psn must fit 24 bits (asserted in debug builds; in release they are written unmasked so
// the peer's decoder rejects them rather than connecting to a truncated QP number).
void encode_handle(const ConnectionHandle& h, std::span<std::uint8_t, kHandleMaxSize> out);
std::array<std::uint8_t, kHandleMaxSize> encode_handle(const ConnectionHandle& h);

// The legacy single-path layout a non-HA peer sends: v1 with the "RCSP" magic and no flags.
std::array<std::uint8_t, kHandleMaxSize> encode_single_path_handle(const QpEndpoint& primary);

// Accepts kHandleWireSize..kHandleMaxSize bytes (NCCL hands over all 128).
Result<DecodedHandle> decode_handle(std::span<const std::uint8_t> bytes);

// One line for logs: "qpn=0x0001a2 lid=7 psn=0x00beef gid=fe80:0000:...:0001 dual_path=yes".
std::string describe(const ConnectionHandle& h);

}  // namespace railcheck
