// The NCCL connection handle codec (engine/handshake/handle_codec.hpp): wire format v1, its
// rejections, and the graceful degradation to a single path for a non-HA peer.
#include "engine/handshake/handle_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace railcheck {
namespace {

using Bytes = std::array<std::uint8_t, kHandleMaxSize>;
namespace wire = handle_wire;

QpEndpoint endpoint(std::uint32_t qpn, std::uint16_t lid, std::uint32_t psn, std::uint8_t gid_seed) {
  QpEndpoint ep;
  ep.qpn = qpn;
  ep.lid = lid;
  ep.psn = psn;
  for (std::size_t i = 0; i < ep.gid.size(); ++i) ep.gid[i] = static_cast<std::uint8_t>(gid_seed + i * 17);
  return ep;
}

QpEndpoint all_ones_endpoint() {
  QpEndpoint ep;
  ep.qpn = kQpnMask;
  ep.psn = kPsnMask;
  ep.lid = 0xFFFF;
  ep.gid.fill(0xFF);
  return ep;
}

// Test helper: overwrite a little-endian field of `width` bytes, then recompute the checksum so
// the decoder gets past the crc and has to judge the field itself.
void patch_field(Bytes& b, std::size_t offset, std::uint32_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) b[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
  const std::uint32_t crc = crc32_iso_hdlc(std::span<const std::uint8_t>(b).first(wire::kCrcOffset));
  for (std::size_t i = 0; i < 4; ++i) b[wire::kCrcOffset + i] = static_cast<std::uint8_t>(crc >> (8 * i));
}

// The rejection's message, or a marker that makes the REQUIRE_THAT fail readably.
std::string rejection(std::span<const std::uint8_t> bytes) {
  auto r = decode_handle(bytes);
  if (r.ok()) return "<accepted>";
  CHECK_FALSE(r.error().hint.empty());
  return r.error().what;
}

using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("crc32_iso_hdlc matches the CRC-32/ISO-HDLC check value", "[handshake][handle]") {
  const std::string check = "123456789";
  const std::vector<std::uint8_t> bytes(check.begin(), check.end());
  CHECK(crc32_iso_hdlc(bytes) == 0xCBF43926U);
  CHECK(crc32_iso_hdlc({}) == 0U);
}

TEST_CASE("handle v1 byte image is the documented little-endian layout", "[handshake][handle]") {
  ConnectionHandle h{true, endpoint(0x0A0B0C, 0x1234, 0x112233, 0)};
  const Bytes b = encode_handle(h);
  const std::vector<std::uint8_t> head(b.begin(), b.begin() + wire::kGidOffset);
  CHECK(head == std::vector<std::uint8_t>{'R', 'C', 'H', 'A', 1, 0x01, 0, 0, 0x0C, 0x0B, 0x0A, 0x00});
  CHECK(std::equal(h.primary.gid.begin(), h.primary.gid.end(), b.begin() + wire::kGidOffset));
  const std::vector<std::uint8_t> tail(b.begin() + wire::kLidOffset, b.begin() + wire::kCrcOffset);
  CHECK(tail == std::vector<std::uint8_t>{0x34, 0x12, 0, 0, 0x33, 0x22, 0x11, 0x00});
  const std::uint32_t crc = crc32_iso_hdlc(std::span<const std::uint8_t>(b).first(wire::kCrcOffset));
  CHECK(b[36] == (crc & 0xFF));
  CHECK(b[37] == ((crc >> 8) & 0xFF));
  CHECK(b[38] == ((crc >> 16) & 0xFF));
  CHECK(b[39] == (crc >> 24));

  const Bytes sp = encode_single_path_handle(h.primary);
  CHECK(std::vector<std::uint8_t>(sp.begin(), sp.begin() + 6) == std::vector<std::uint8_t>{'R', 'C', 'S', 'P', 1, 0});
}

TEST_CASE("handle round-trips every field, including 24-bit maxima and an all-0xFF gid", "[handshake][handle]") {
  const std::vector<QpEndpoint> endpoints = {
      QpEndpoint{},
      endpoint(0x000001, 1, 0x000001, 0x10),
      endpoint(0x00ABCD, 0x0007, 0x00BEEF, 0xFE),
      endpoint(kQpnMask, 0, kPsnMask, 0),
      all_ones_endpoint(),
  };
  for (const QpEndpoint& ep : endpoints) {
    for (bool dual : {false, true}) {
      const ConnectionHandle h{dual, ep};
      INFO(describe(h));
      auto decoded = decode_handle(encode_handle(h));
      REQUIRE(decoded.ok());
      CHECK(decoded->handle == h);
      CHECK(decoded->peer == HandlePeerKind::HaCapable);
    }
  }
}

TEST_CASE("encoded handle fits NCCL_NET_HANDLE_MAXSIZE and zero-fills the rest", "[handshake][handle]") {
  STATIC_REQUIRE(kHandleWireSize == 40);
  STATIC_REQUIRE(kHandleWireSize <= kHandleMaxSize);
  Bytes buf;
  buf.fill(0xA5);  // whatever NCCL's buffer held before listen()
  encode_handle(ConnectionHandle{true, all_ones_endpoint()}, buf);
  for (std::size_t k = kHandleWireSize; k < kHandleMaxSize; ++k) {
    INFO("offset " << k);
    CHECK(buf[k] == 0);
  }
  CHECK(decode_handle(buf).ok());
}

TEST_CASE("handle byte image depends only on the field values, never on the object", "[handshake][handle]") {
  const QpEndpoint ep = endpoint(0x123456, 42, 0x654321, 3);
  const ConnectionHandle on_stack{true, ep};
  const auto on_heap = std::make_unique<ConnectionHandle>(ConnectionHandle{true, ep});
  CHECK(encode_handle(on_stack) == encode_handle(*on_heap));
  CHECK(encode_handle(on_stack) == encode_handle(on_stack));
}

TEST_CASE("handle decodes from exactly the wire size up to the NCCL maximum", "[handshake][handle]") {
  const ConnectionHandle h{true, endpoint(77, 5, 99, 1)};
  const Bytes b = encode_handle(h);
  for (std::size_t n : {kHandleWireSize, kHandleWireSize + 1, std::size_t{64}, kHandleMaxSize}) {
    INFO("size " << n);
    auto decoded = decode_handle(std::span<const std::uint8_t>(b).first(n));
    REQUIRE(decoded.ok());
    CHECK(decoded->handle == h);
  }
}

TEST_CASE("handle shorter than the wire size is rejected as truncated", "[handshake][handle]") {
  const Bytes b = encode_handle(ConnectionHandle{true, endpoint(1, 2, 3, 4)});
  CHECK(rejection(std::span<const std::uint8_t>(b).first(kHandleWireSize - 1)) ==
        "truncated handle: got 39 bytes, need 40");
  CHECK(rejection(std::span<const std::uint8_t>(b).first(0)) == "truncated handle: got 0 bytes, need 40");
}

TEST_CASE("handle longer than NCCL_NET_HANDLE_MAXSIZE is rejected as oversized", "[handshake][handle]") {
  const Bytes b = encode_handle(ConnectionHandle{true, endpoint(1, 2, 3, 4)});
  std::vector<std::uint8_t> big(b.begin(), b.end());
  big.push_back(0);
  CHECK(rejection(big) == "oversized handle: 129 bytes > 128 (NCCL_NET_HANDLE_MAXSIZE)");
}

TEST_CASE("a single flipped bit anywhere in the 128-byte handle is rejected", "[handshake][handle]") {
  const Bytes good = encode_handle(ConnectionHandle{true, endpoint(0x0ABCDE, 9, 0x012345, 0x42)});
  for (std::size_t pos = 0; pos < kHandleMaxSize; ++pos) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes bad = good;
      bad[pos] ^= static_cast<std::uint8_t>(1U << bit);
      INFO("flipped bit " << bit << " of byte " << pos);
      const std::string why = rejection(bad);
      if (pos < wire::kVersionOffset) {
        CHECK_THAT(why, Contains("unknown magic") && Contains("not a railcheck handle"));
      } else if (pos == wire::kVersionOffset) {
        CHECK_THAT(why, Contains("unsupported handle version"));
      } else if (pos >= kHandleWireSize) {
        CHECK_THAT(why, Contains("trailing bytes not zero at offset " + std::to_string(pos)));
      } else {
        CHECK_THAT(why, Contains("checksum mismatch: stored 0x"));
      }
    }
  }
}

TEST_CASE("handle with an intact crc but another version is rejected as unsupported", "[handshake][handle]") {
  Bytes b = encode_handle(ConnectionHandle{true, endpoint(1, 2, 3, 4)});
  patch_field(b, wire::kVersionOffset, 2, 1);
  CHECK(rejection(b) == "unsupported handle version 2 (this build speaks 1)");
  patch_field(b, wire::kVersionOffset, 0, 1);
  CHECK(rejection(b) == "unsupported handle version 0 (this build speaks 1)");
}

TEST_CASE("handle with reserved bits or fields set is rejected naming the field", "[handshake][handle]") {
  const Bytes good = encode_handle(ConnectionHandle{false, endpoint(1, 2, 3, 4)});
  SECTION("reserved flag bits") {
    for (int bit = 1; bit < 8; ++bit) {
      Bytes b = good;
      patch_field(b, wire::kFlagsOffset, 1U << bit, 1);
      INFO("flag bit " << bit);
      CHECK_THAT(rejection(b), Contains("reserved flag bits set") && Contains("only bit0"));
    }
  }
  SECTION("reserved u16 after flags") {
    Bytes b = good;
    patch_field(b, wire::kReserved0Offset, 0x0100, 2);
    CHECK_THAT(rejection(b), Contains("reserved field at offset 6 is 0x0100, expected 0"));
  }
  SECTION("reserved u16 after lid") {
    Bytes b = good;
    patch_field(b, wire::kReserved1Offset, 0x0001, 2);
    CHECK_THAT(rejection(b), Contains("reserved field at offset 30 is 0x0001, expected 0"));
  }
}

TEST_CASE("handle with a qpn or psn wider than 24 bits is rejected", "[handshake][handle]") {
  const Bytes good = encode_handle(ConnectionHandle{true, endpoint(1, 2, 3, 4)});
  Bytes b = good;
  patch_field(b, wire::kQpnOffset, kQpnMask + 1, 4);  // 25 bits
  CHECK_THAT(rejection(b), Contains("qpn 0x01000000 does not fit 24 bits"));
  b = good;
  patch_field(b, wire::kPsnOffset, 0x80000000U, 4);
  CHECK_THAT(rejection(b), Contains("psn 0x80000000 does not fit 24 bits"));
}

TEST_CASE("handle with an intact layout and a stale crc is rejected as a checksum mismatch", "[handshake][handle]") {
  Bytes b = encode_handle(ConnectionHandle{true, endpoint(1, 2, 3, 4)});
  const std::uint32_t computed = crc32_iso_hdlc(std::span<const std::uint8_t>(b).first(wire::kCrcOffset));
  b[wire::kCrcOffset] ^= 0xFF;
  const std::uint32_t stored = computed ^ 0xFFU;
  CHECK_THAT(rejection(b),
             Contains(fmt::format("checksum mismatch: stored 0x{:08x} computed 0x{:08x}", stored, computed)));
}

TEST_CASE("single-path magic degrades to one path with dual_path forced off", "[handshake][handle]") {
  const QpEndpoint ep = endpoint(0x00C0DE, 11, 0x00F00D, 7);
  Bytes b = encode_single_path_handle(ep);
  auto decoded = decode_handle(b);
  REQUIRE(decoded.ok());
  CHECK(decoded->peer == HandlePeerKind::SinglePathOnly);
  CHECK_FALSE(decoded->handle.dual_path);
  CHECK(decoded->handle.primary == ep);

  patch_field(b, wire::kFlagsOffset, wire::kFlagDualPath, 1);  // a legacy peer claiming two paths
  decoded = decode_handle(b);
  REQUIRE(decoded.ok());
  CHECK(decoded->peer == HandlePeerKind::SinglePathOnly);
  CHECK_FALSE(decoded->handle.dual_path);
}

TEST_CASE("foreign magic degrades only when the v1 checksum vouches for the bytes", "[handshake][handle]") {
  const QpEndpoint ep = endpoint(5, 6, 7, 8);
  Bytes b = encode_handle(ConnectionHandle{true, ep});
  patch_field(b, wire::kMagicOffset, 0x12345678, 4);
  auto decoded = decode_handle(b);
  REQUIRE(decoded.ok());
  CHECK(decoded->peer == HandlePeerKind::SinglePathOnly);
  CHECK_FALSE(decoded->handle.dual_path);
  CHECK(decoded->handle.primary == ep);

  b[wire::kCrcOffset] ^= 1;
  CHECK(rejection(b) ==
        "unknown magic 0x12345678, not a railcheck handle (expected 0x41484352 \"RCHA\" or 0x50534352 \"RCSP\"; "
        "checksum also fails)");
}

TEST_CASE("describe prints the handle on one line", "[handshake][handle]") {
  QpEndpoint ep;
  ep.qpn = 0x1A2;
  ep.lid = 7;
  ep.psn = 0xBEEF;
  ep.gid = {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xFF, 0xFE, 0x33, 0x44, 0x55};
  CHECK(describe(ConnectionHandle{true, ep}) ==
        "qpn=0x0001a2 lid=7 psn=0x00beef gid=fe80:0000:0000:0000:0211:22ff:fe33:4455 dual_path=yes");
  CHECK_THAT(describe(ConnectionHandle{false, ep}), Contains("dual_path=no"));
}

}  // namespace railcheck
