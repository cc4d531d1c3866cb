#pragma once
// What a peer needs to bring its side of an RC QP to RTR: the shareable addressing fields only.
// Everything here is valid on another host; nothing process-local (no pointer, fd, lkey).
#include <array>
#include <cstdint>

namespace railcheck {

using Gid = std::array<std::uint8_t, 16>;

struct QpEndpoint {
  std::uint32_t qpn = 0;  // 24 bits on the wire of IB
  Gid gid{};
  std::uint16_t lid = 0;
  std::uint32_t psn = 0;  // 24 bits
  bool operator==(const QpEndpoint&) const = default;
};

constexpr std::uint32_t kQpnMask = 0x00FF'FFFF;
constexpr std::uint32_t kPsnMask = 0x00FF'FFFF;

// RC reliability settings that go into ibv_modify_qp at RTR/RTS.
struct QpReliability {
  std::uint8_t timeout = 14;        // local ACK timeout exponent: 4.096 us * 2^timeout
  std::uint8_t retry_cnt = 7;       // transport retries before RETRY_EXC_ERR
  std::uint8_t rnr_retry = 7;       // RNR retries; 7 means "retry forever" in the IB spec
  std::uint8_t min_rnr_timer = 12;  // IB encoding; 12 = 0.64 ms
  bool operator==(const QpReliability&) const = default;
};

}  // namespace railcheck
