#pragma once
// One measured run of the host-proxy path and of the mapped-memory ping-pong floor, with all
// the CUDA allocation and the proxy thread set up and torn down here (used by the GPU test and
// by the latency benchmark).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/cuda/host_proxy.hpp"

namespace railcheck::hw::cuda {

// GPUs CUDA can use here; 0 when there is no GPU or no driver (callers exit 77: skipped).
int gpu_count(std::string* why = nullptr);

struct ProxyRun {
  std::vector<std::uint64_t> round_trip_ns;
  ProxyStats stats;
  std::uint32_t stamp_errors = 0;  // writes the GPU saw missing after its flag was raised
  std::optional<std::string> error;
  std::string issuer;
};

struct ProxyRunConfig {
  std::uint32_t iterations = 1000;
  std::uint32_t writes_per_transfer = 1;
  std::uint32_t bytes_per_write = 64;
  std::uint64_t ring_capacity = 256;
  std::uint64_t seed = 1;
  std::size_t max_hold = 1;  // ShuffledCopyIssuer reordering window (1: in order)
};

ProxyRun run_proxy_round_trip(const ProxyRunConfig& cfg);
// GPU writes ping, a host thread copies it to pong, the GPU waits for it: the PCIe round trip.
std::vector<std::uint64_t> run_ping_pong(std::uint32_t iterations, std::optional<std::string>* error);

}  // namespace railcheck::hw::cuda
