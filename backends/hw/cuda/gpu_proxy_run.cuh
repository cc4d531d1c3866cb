#pragma once
// One measured run of the host-proxy path and of the mapped-memory ping-pong floor, with all
// the CUDA allocation and the proxy thread set up and torn down here (used by the GPU test and
// by the latency benchmark).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/cuda/host_proxy.hpp"
#include "backends/hw/cuda/proxy_kernels.cuh"

namespace railcheck::hw::cuda {

// GPUs CUDA can use here; 0 when there is no GPU or no driver (callers exit 77: skipped).
int gpu_count(std::string* why = nullptr);

struct ProxyRun {
  std::vector<std::uint64_t> round_trip_ns;
  std::vector<RoundTripPhases> phases;    // per iteration, GPU clock
  std::vector<std::uint32_t> service_ns;  // per transfer, proxy clock (only with trace_proxy)
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
  bool trace_proxy = false;  // HostProxy::record_service_times (two host clock reads a transfer)
};

ProxyRun run_proxy_round_trip(const ProxyRunConfig& cfg);
// GPU writes ping, a host thread copies it to pong, the GPU waits for it: the PCIe round trip.
// round_trip_ns and phases are filled; error set when a CUDA call failed.
ProxyRun run_ping_pong(std::uint32_t iterations);

}  // namespace railcheck::hw::cuda
