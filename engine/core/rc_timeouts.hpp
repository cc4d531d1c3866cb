#pragma once
// InfiniBand RC timing formulas (IBTA vol. 1, 9.7.6.1.3 and the ibv_modify_qp man page).
#include <cstdint>

#include "engine/core/qp_endpoint.hpp"
#include "engine/core/time.hpp"

namespace railcheck {

// Local ACK timeout: 4.096 us * 2^timeout. timeout == 0 means "infinite" in the spec; we treat
// it as a configuration error upstream and never call this with 0.
constexpr Nanos ack_timeout(std::uint8_t timeout_exp) { return Nanos{4096LL << timeout_exp}; }

// How long the HCA keeps retrying before it reports RETRY_EXC_ERR: the first attempt plus
// retry_cnt retransmissions, each waiting one ACK timeout. (The seed approximates this as
// timeout * retry_cnt ≈ 470 ms for timeout=14, retry_cnt=7; the exact count is 8 × 67.1 ms
// = 537 ms, and real HCAs may wait up to 4× longer per attempt.)
constexpr Nanos hardware_retry_window(const QpReliability& r) {
  return ack_timeout(r.timeout) * (static_cast<std::int64_t>(r.retry_cnt) + 1);
}

// RNR NAK delay from the IB encoding of min_rnr_timer (table 45 of the IBTA spec), in us*100.
constexpr Nanos rnr_delay(std::uint8_t code) {
  constexpr std::int64_t kTable10us[32] = {65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,   32,
                                           48,    64,   96,   128,  192,  256,   384,   512,   768,   1024, 1536,
                                           2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
  return Nanos{kTable10us[code & 31] * 10'000};
}

// rnr_retry == 7 means the sender retries an RNR NAK forever.
constexpr bool rnr_retries_forever(const QpReliability& r) { return r.rnr_retry >= 7; }

}  // namespace railcheck
