#pragma once
// GPU side of the host-proxy path and of its floor (a plain mapped-memory ping-pong). Each
// kernel runs one thread: it measures what one GPU thread that needs a network write waits.
#include <cstdint>

#include "backends/hw/cuda/descriptor_ring.hpp"

namespace railcheck::hw::cuda {

// Where a round trip's time goes, per iteration, from the GPU's %globaltimer (ns from the
// iteration's start): the descriptors (or the ping) written, the wait before the first poll
// over, the flag seen; and how many flag polls that took.
struct RoundTripPhases {
  std::uint64_t published_ns;
  std::uint64_t polling_from_ns;
  std::uint64_t seen_ns;
  std::uint64_t polls;
};

struct ProxyRoundTripArgs {
  RingHeader* ring;      // device pointer of the mapped ring header
  SlotWords* slots;      // device pointer of the mapped slots
  std::uint64_t* flags;  // device pointer of the mapped completion flags
  std::uint32_t iterations;
  std::uint32_t writes_per_transfer;  // >= 1; the first descriptor carries expect = this
  std::uint32_t bytes_per_write;      // 1 .. SlotCodec::kInlineMax: inline descriptors, no data fence
  RoundTripPhases* phases;            // per iteration (device-visible memory), may be null
  // Mapped source and destination, write w at w * write_stride(bytes_per_write). A write the
  // kernel posts from src gets its first 8 bytes stamped with stamp_word(it, w, 0) (when it has
  // 8), and after the flag the kernel checks the stamp arrived; an inline write's payload is
  // stamp_word(it, w, j) for each 8 bytes j, and every byte of it is checked.
  std::uint8_t* src;
  const std::uint8_t* dst;
  std::uint32_t* errors;  // stamps that had not landed when the flag said they had
};

RAILCHECK_HD constexpr std::uint64_t write_stride(std::uint32_t bytes) {
  return (std::uint64_t{bytes} + 7) & ~std::uint64_t{7};
}
RAILCHECK_HD constexpr std::uint64_t stamp_word(std::uint32_t it, std::uint32_t w, std::uint32_t j) {
  return std::uint64_t{it + 1} << 32 | std::uint64_t{w} << 8 | j;
}

// Host-side launchers (proxy_kernels.cu); they return the cudaError_t as int.
int launch_proxy_round_trip(const ProxyRoundTripArgs& a);
int launch_ping_pong(std::uint64_t* ping, std::uint64_t* pong, std::uint32_t iterations, RoundTripPhases* phases);

}  // namespace railcheck::hw::cuda
