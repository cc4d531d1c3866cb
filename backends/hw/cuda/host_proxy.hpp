#pragma once
// The CPU half of the GPU-initiated write path: drains the descriptor ring, posts each write
// through a WriteIssuer (an inline descriptor's bytes handed over with it), counts landed
// immediates with the engine's ImmCounter, and raises the completion flag the GPU polls when a
// transfer's last write has landed — in whatever order the writes land. No protocol decision
// lives here beyond "which flag belongs to which imm".
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "backends/hw/cuda/descriptor_ring.hpp"
#include "backends/hw/cuda/write_issuer.hpp"
#include "engine/imm/imm_counter.hpp"

namespace railcheck::hw::cuda {

struct ProxyStats {
  std::uint64_t descriptors = 0;
  std::uint64_t landed = 0;
  std::uint64_t flags_raised = 0;
};

class HostProxy {
 public:
  HostProxy(DescriptorRing ring, std::uint64_t* flags, std::uint32_t flag_count, WriteIssuer& issuer)
      : ring_(ring), flags_(flags), flag_count_(flag_count), issuer_(issuer) {
    waiters_.reserve(64);
    landed_.reserve(64);
  }
  ~HostProxy() { stop(); }
  HostProxy(const HostProxy&) = delete;
  HostProxy& operator=(const HostProxy&) = delete;

  // One pass: every descriptor in the ring, one poll of the issuer. Returns how many
  // descriptors and landings it handled, or the first error (a gap in seq, a bad flag slot,
  // a duplicate landing): the proxy then stops, it never guesses.
  Result<std::size_t> run_once();

  // What the proxy thread does when a pass found nothing: Yield gives the core away (shared CI
  // machines, tests); Spin keeps polling with a pause hint, the way a latency-bound proxy owns a
  // core (TransferEngine: one pinned thread per GPU, research/p2p_libs.md) and the way the
  // ping-pong floor's echo polls. With Yield, a descriptor published while the thread is inside
  // sched_yield waits for the syscall to return.
  enum class Idle { Yield, Spin };
  // A thread that calls run_once until stop() or an error.
  void start(Idle idle = Idle::Yield);
  void stop();
  std::optional<Error> error() const;
  ProxyStats stats() const;
  // Phase measurement (bench/cuda_host_proxy.cu): when set before start(), the proxy appends, per
  // transfer, the host time from popping its counting descriptor to raising its flag, in ns. Two
  // clock reads a transfer; `out` should have its capacity reserved (no allocation while timed).
  // Read it after stop().
  void record_service_times(std::vector<std::uint32_t>* out) { service_ns_ = out; }

 private:
  Result<bool> on_descriptor(const WriteDescriptor& d);
  Result<bool> on_landed(std::uint32_t imm);
  void complete(std::uint32_t imm);

  DescriptorRing ring_;
  std::uint64_t* flags_;
  std::uint32_t flag_count_;
  WriteIssuer& issuer_;
  imm::ImmCounter counter_;
  struct Waiter {
    std::uint32_t imm = 0;
    std::uint32_t flag_slot = 0;
    std::uint64_t flag_value = 0;
    std::chrono::steady_clock::time_point popped{};  // only when service_ns_ is set
  };
  // imm -> whom to tell. A flat list searched from the back: it holds only the transfers in
  // flight (a handful; at most the ring's capacity), and a node-based map's allocation per
  // transfer cost more than the search on the GPU round trip's critical path (docs/cuda.md).
  std::vector<Waiter> waiters_;
  std::uint64_t next_seq_ = 0;
  std::vector<std::uint32_t> landed_;
  InlineBytes inline_bytes_{};  // the inline descriptor just popped: its payload, until posted
  std::vector<std::uint32_t>* service_ns_ = nullptr;

  std::thread thread_;
  std::atomic<bool> running_{false};
  mutable std::mutex mu_;  // guards error_ for readers on other threads
  std::optional<Error> error_;
  // Written by the proxy thread only, read by others: relaxed counters, no lock per descriptor.
  std::atomic<std::uint64_t> descriptors_{0}, landed_count_{0}, flags_raised_{0};
};

}  // namespace railcheck::hw::cuda
