// Codec for the NCCL connection handle, wire format v1. The layout and the rule for foreign
// magics are in handle_codec.hpp.
#include "engine/handshake/handle_codec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/engine_assert.hpp"
#include "engine/core/wire_safe.hpp"

namespace railcheck {

// What the handle carries must mean the same thing in the peer's process: no pointer, no
// stream or event, no local id (engine/core/wire_safe.hpp; the seed's proxy-setup bug).
static_assert(WireSafe<QpEndpoint>);
static_assert(WireSafe<ConnectionHandle>);

using namespace handle_wire;

namespace {

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1U) ? (c >> 1) ^ 0xEDB88320U : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kCrcTable = make_crc_table();

void put_u16(std::span<std::uint8_t> out, std::size_t at, std::uint16_t v) {
  out[at] = static_cast<std::uint8_t>(v);
  out[at + 1] = static_cast<std::uint8_t>(v >> 8);
}
void put_u32(std::span<std::uint8_t> out, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint16_t get_u16(std::span<const std::uint8_t> in, std::size_t at) {
  return static_cast<std::uint16_t>(in[at] | (in[at + 1] << 8));
}
std::uint32_t get_u32(std::span<const std::uint8_t> in, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(in[at + i]) << (8 * i);
  return v;
}

void encode_v1(std::uint32_t magic, std::uint8_t flags, const QpEndpoint& ep, std::span<std::uint8_t> out) {
  if (!RAILCHECK_ASSERT(out.size() >= kHandleWireSize, "the handle buffer holds the whole v1 layout")) return;
  RAILCHECK_ASSERT((ep.qpn & ~kQpnMask) == 0, "a QP number is 24 bits");
  RAILCHECK_ASSERT((ep.psn & ~kPsnMask) == 0, "a PSN is 24 bits");
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  put_u32(out, kMagicOffset, magic);
  out[kVersionOffset] = kVersion;
  out[kFlagsOffset] = flags;
  put_u16(out, kReserved0Offset, 0);
  put_u32(out, kQpnOffset, ep.qpn);
  std::copy(ep.gid.begin(), ep.gid.end(), out.begin() + kGidOffset);
  put_u16(out, kLidOffset, ep.lid);
  put_u16(out, kReserved1Offset, 0);
  put_u32(out, kPsnOffset, ep.psn);
  put_u32(out, kCrcOffset, crc32_iso_hdlc(out.first(kCrcOffset)));
}

constexpr const char* kGarbledHint = "the handle was garbled between ranks; check the bootstrap that carries it";

Error garbled(std::string what) { return Error{std::move(what), kGarbledHint}; }

}  // namespace

std::uint32_t crc32_iso_hdlc(std::span<const std::uint8_t> bytes) {
  std::uint32_t c = 0xFFFFFFFFU;
  for (std::uint8_t b : bytes) c = kCrcTable[(c ^ b) & 0xFFU] ^ (c >> 8);
  return c ^ 0xFFFFFFFFU;
}

void encode_handle(const ConnectionHandle& h, std::span<std::uint8_t, kHandleMaxSize> out) {
  encode_v1(kMagicHa, h.dual_path ? kFlagDualPath : std::uint8_t{0}, h.primary, out);
}

std::array<std::uint8_t, kHandleMaxSize> encode_handle(const ConnectionHandle& h) {
  std::array<std::uint8_t, kHandleMaxSize> out{};
  encode_handle(h, out);
  return out;
}

std::array<std::uint8_t, kHandleMaxSize> encode_single_path_handle(const QpEndpoint& primary) {
  std::array<std::uint8_t, kHandleMaxSize> out{};
  encode_v1(kMagicSinglePath, 0, primary, out);
  return out;
}

Result<DecodedHandle> decode_handle(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHandleWireSize) {
    return Error{fmt::format("truncated handle: got {} bytes, need {}", bytes.size(), kHandleWireSize),
                 "pass the whole buffer NCCL's listen() filled (NCCL_NET_HANDLE_MAXSIZE bytes)"};
  }
  if (bytes.size() > kHandleMaxSize) {
    return Error{fmt::format("oversized handle: {} bytes > {} (NCCL_NET_HANDLE_MAXSIZE)", bytes.size(), kHandleMaxSize),
                 "pass exactly the NCCL handle buffer, not a larger region"};
  }

  const std::uint32_t magic = get_u32(bytes, kMagicOffset);
  const std::uint32_t stored_crc = get_u32(bytes, kCrcOffset);
  const std::uint32_t computed_crc = crc32_iso_hdlc(bytes.first(kCrcOffset));
  const bool known_magic = magic == kMagicHa || magic == kMagicSinglePath;
  // An unfamiliar magic is only trusted as a single-path peer when the v1 checksum vouches for
  // the bytes; otherwise it is not our handle at all.
  if (!known_magic && stored_crc != computed_crc) {
    return Error{fmt::format("unknown magic 0x{:08x}, not a railcheck handle (expected 0x{:08x} \"RCHA\" or 0x{:08x} "
                             "\"RCSP\"; checksum also fails)",
                             magic, kMagicHa, kMagicSinglePath),
                 "the peer does not run a railcheck net plugin, or the handle was garbled between ranks"};
  }
  // The version decides the layout of everything after it, so it is checked before anything
  // that layout defines (trailing bytes, checksum position, fields).
  const std::uint8_t version = bytes[kVersionOffset];
  if (version != kVersion) {
    return Error{fmt::format("unsupported handle version {} (this build speaks {})", version, kVersion),
                 "run the same railcheck plugin build on every rank"};
  }
  for (std::size_t k = kHandleWireSize; k < bytes.size(); ++k) {
    if (bytes[k] != 0) {
      return garbled(fmt::format("garbled handle: trailing bytes not zero at offset {} (value 0x{:02x}, expected 0)", k,
                                 bytes[k]));
    }
  }
  if (stored_crc != computed_crc) {
    return garbled(
        fmt::format("garbled handle: checksum mismatch: stored 0x{:08x} computed 0x{:08x}", stored_crc, computed_crc));
  }

  const std::uint8_t flags = bytes[kFlagsOffset];
  if ((flags & ~kFlagDualPath) != 0) {
    return garbled(
        fmt::format("garbled handle: reserved flag bits set: flags 0x{:02x}, only bit0 (dual path) may be set", flags));
  }
  if (const auto r = get_u16(bytes, kReserved0Offset); r != 0) {
    return garbled(
        fmt::format("garbled handle: reserved field at offset {} is 0x{:04x}, expected 0", kReserved0Offset, r));
  }
  if (const auto r = get_u16(bytes, kReserved1Offset); r != 0) {
    return garbled(
        fmt::format("garbled handle: reserved field at offset {} is 0x{:04x}, expected 0", kReserved1Offset, r));
  }
  QpEndpoint ep;
  ep.qpn = get_u32(bytes, kQpnOffset);
  if ((ep.qpn & ~kQpnMask) != 0) {
    return garbled(fmt::format("garbled handle: qpn 0x{:08x} does not fit 24 bits (max 0x{:06x})", ep.qpn, kQpnMask));
  }
  std::copy_n(bytes.begin() + kGidOffset, ep.gid.size(), ep.gid.begin());
  ep.lid = get_u16(bytes, kLidOffset);
  ep.psn = get_u32(bytes, kPsnOffset);
  if ((ep.psn & ~kPsnMask) != 0) {
    return garbled(fmt::format("garbled handle: psn 0x{:08x} does not fit 24 bits (max 0x{:06x})", ep.psn, kPsnMask));
  }

  DecodedHandle out;
  out.handle.primary = ep;
  if (magic == kMagicHa) {
    out.peer = HandlePeerKind::HaCapable;
    out.handle.dual_path = (flags & kFlagDualPath) != 0;
  } else {
    out.peer = HandlePeerKind::SinglePathOnly;  // graceful degradation: one path, no failover
    out.handle.dual_path = false;
  }
  return out;
}

std::string describe(const ConnectionHandle& h) {
  const Gid& g = h.primary.gid;
  std::string gid;
  for (std::size_t i = 0; i < g.size(); i += 2) {
    if (i != 0) gid += ':';
    gid += fmt::format("{:02x}{:02x}", g[i], g[i + 1]);
  }
  return fmt::format("qpn=0x{:06x} lid={} psn=0x{:06x} gid={} dual_path={}", h.primary.qpn, h.primary.lid,
                     h.primary.psn, gid, h.dual_path ? "yes" : "no");
}

}  // namespace railcheck
