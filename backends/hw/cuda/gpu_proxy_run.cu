#include <atomic>
#include <cstring>
#include <thread>

#include "backends/hw/cuda/gpu_proxy_run.cuh"
#include "backends/hw/cuda/shuffled_copy_issuer.hpp"

namespace railcheck::hw::cuda {

namespace {

std::string cuda_error(const char* call, cudaError_t e) { return std::string(call) + " failed: " + cudaGetErrorString(e); }

// Pinned host memory mapped into the GPU's address space.
struct Mapped {
  void* host = nullptr;
  void* dev = nullptr;
  explicit Mapped(std::size_t bytes, std::string& err) {
    if (auto e = cudaHostAlloc(&host, bytes, cudaHostAllocMapped | cudaHostAllocPortable); e != cudaSuccess) {
      err = cuda_error("cudaHostAlloc", e);
      host = nullptr;
      return;
    }
    std::memset(host, 0, bytes);
    if (auto e = cudaHostGetDevicePointer(&dev, host, 0); e != cudaSuccess) err = cuda_error("cudaHostGetDevicePointer", e);
  }
  ~Mapped() {
    if (host) cudaFreeHost(host);
  }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
};

template <typename T>
T* dev_ptr(const Mapped& m, std::size_t byte_offset = 0) {
  return reinterpret_cast<T*>(static_cast<char*>(m.dev) + byte_offset);
}

// Per-iteration phases in device memory, copied back into `run` after the kernel.
struct PhaseBuffer {
  RoundTripPhases* dev = nullptr;
  std::uint32_t n;
  PhaseBuffer(std::uint32_t iterations, std::string& err) : n(iterations) {
    if (auto e = cudaMalloc(&dev, sizeof(RoundTripPhases) * n); e != cudaSuccess) {
      err = cuda_error("cudaMalloc", e);
      dev = nullptr;
    }
  }
  ~PhaseBuffer() {
    if (dev) cudaFree(dev);
  }
  PhaseBuffer(const PhaseBuffer&) = delete;
  PhaseBuffer& operator=(const PhaseBuffer&) = delete;
  void copy_out(ProxyRun& run) const {
    run.phases.resize(n);
    if (auto e = cudaMemcpy(run.phases.data(), dev, sizeof(RoundTripPhases) * n, cudaMemcpyDeviceToHost);
        e != cudaSuccess && !run.error)
      run.error = cuda_error("cudaMemcpy", e);
    run.round_trip_ns.clear();
    for (const auto& p : run.phases) run.round_trip_ns.push_back(p.seen_ns);
  }
};

}  // namespace

int gpu_count(std::string* why) {
  int n = 0;
  if (auto e = cudaGetDeviceCount(&n); e != cudaSuccess) {
    if (why) *why = cuda_error("cudaGetDeviceCount", e);
    return 0;
  }
  if (n == 0 && why) *why = "cudaGetDeviceCount found no GPU";
  return n;
}

ProxyRun run_proxy_round_trip(const ProxyRunConfig& cfg) {
  ProxyRun run;
  std::string err;
  const std::size_t data_bytes = cfg.writes_per_transfer * write_stride(cfg.bytes_per_write) + 8;
  Mapped ring_mem(ring_bytes(cfg.ring_capacity), err), flags(64, err), src(data_bytes, err), dst(data_bytes, err),
      errors(64, err);
  PhaseBuffer phases(cfg.iterations, err);
  if (!err.empty()) {
    run.error = err;
    return run;
  }
  auto ring = DescriptorRing::format(ring_mem.host, cfg.ring_capacity);
  ShuffledCopyIssuer issuer(static_cast<const std::uint8_t*>(src.host), static_cast<std::uint8_t*>(dst.host), cfg.seed,
                            cfg.max_hold);
  run.issuer = issuer.name();
  HostProxy proxy(ring, static_cast<std::uint64_t*>(flags.host), 8, issuer);
  if (cfg.trace_proxy) {
    run.service_ns.reserve(cfg.iterations);
    proxy.record_service_times(&run.service_ns);
  }
  proxy.start(HostProxy::Idle::Spin);  // a GPU machine has cores to spare; compare like with like (the floor spins)
  ProxyRoundTripArgs a{dev_ptr<RingHeader>(ring_mem),
                       dev_ptr<SlotWords>(ring_mem, sizeof(RingHeader)),
                       dev_ptr<std::uint64_t>(flags),
                       cfg.iterations,
                       cfg.writes_per_transfer,
                       cfg.bytes_per_write,
                       phases.dev,
                       dev_ptr<std::uint8_t>(src),
                       dev_ptr<const std::uint8_t>(dst),
                       dev_ptr<std::uint32_t>(errors)};
  if (int e = launch_proxy_round_trip(a); e != 0) run.error = cuda_error("kernel launch", static_cast<cudaError_t>(e));
  if (auto e = cudaDeviceSynchronize(); e != cudaSuccess && !run.error) run.error = cuda_error("cudaDeviceSynchronize", e);
  proxy.stop();
  if (auto pe = proxy.error(); pe && !run.error) run.error = pe->message();
  run.stats = proxy.stats();
  phases.copy_out(run);
  run.stamp_errors = *static_cast<std::uint32_t*>(errors.host);
  return run;
}

ProxyRun run_ping_pong(std::uint32_t iterations) {
  ProxyRun run;
  std::string err;
  Mapped ping(64, err), pong(64, err);
  PhaseBuffer phases(iterations, err);
  if (!err.empty()) {
    run.error = err;
    return run;
  }
  std::atomic<bool> stop{false};
  // The host side of the floor: as little as possible between seeing ping and writing pong.
  std::thread echo([&] {
    auto* p = static_cast<std::uint64_t*>(ping.host);
    auto* q = static_cast<std::uint64_t*>(pong.host);
    std::uint64_t seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      std::uint64_t v = std::atomic_ref<std::uint64_t>(*p).load(std::memory_order_acquire);
      if (v != seen) {
        seen = v;
        std::atomic_ref<std::uint64_t>(*q).store(v, std::memory_order_release);
      }
    }
  });
  if (int e = launch_ping_pong(dev_ptr<std::uint64_t>(ping), dev_ptr<std::uint64_t>(pong), iterations, phases.dev);
      e != 0)
    run.error = cuda_error("kernel launch", static_cast<cudaError_t>(e));
  if (auto e = cudaDeviceSynchronize(); e != cudaSuccess && !run.error)
    run.error = cuda_error("cudaDeviceSynchronize", e);
  stop = true;
  echo.join();
  phases.copy_out(run);
  return run;
}

}  // namespace railcheck::hw::cuda
