#pragma once
// One rank of a zero-buffer communicator on CUDA (issue 16 item 3): its window (VmmWindow),
// every peer's window mapped here, the SMA allocator over its own window, and the collectives
// run by the device executor (flag_kernels.cuh) from the engine's flag programs.
//
//   create: window (cuMemCreate + export) -> zero the flag area -> TCP bootstrap all-gather of
//           WindowHandles -> fetch, import and map every peer's window
//   run:    the fast paths (fast_kernels.cuh) for all-gather, reduce-scatter, all-reduce and
//           all-to-all: LL for small pieces, direct for large 16-byte aligned ones; one kernel,
//           epochs on the device, so CUDA graphs may capture them. Anything else takes the flag
//           program: RankRunner::start (the model's epochs and program) -> launch on the stream
//           -> the runner steps through the program as the device will. A device timeout
//           surfaces as an error naming the peer on the next check()
//
// The bootstrap is also the barrier that keeps peers off a flag area before it is zeroed: no
// rank learns a window before its owner has zeroed it and sent its blob.
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/cuda/zerobuf/fast_kernels.cuh"
#include "backends/hw/cuda/zerobuf/flag_kernels.cuh"
#include "backends/hw/cuda/zerobuf/vmm_window.hpp"
#include "backends/hw/cuda/zerobuf/window_layout.hpp"
#include "engine/core/result.hpp"
#include "engine/core/time.hpp"
#include "engine/zerobuf/rank_runner.hpp"
#include "engine/zerobuf/sma_allocator.hpp"

namespace railcheck::hw::zerobuf {

struct CommOptions {
  std::uint32_t rank = 0;
  std::uint32_t nranks = 1;
  std::string root_address;  // the bootstrap root, "<IPv4>:<port>"; rank 0 opens it
  std::uint64_t run_id = 0;  // same on every rank (0: the bootstrap's default)
  int device = 0;
  railcheck::zerobuf::SmaConfig sma;
  Nanos timeout = sec(10);            // a flag wait longer than this fails the communicator
  Nanos bootstrap_timeout = sec(60);  // every rank must call create within it
  railcheck::zerobuf::FastPathLimits fast;  // same on every rank
  int direct_max_blocks = 128;              // capped at the multiprocessors; same on every rank
  int direct_units_per_thread = 2;          // 16-byte units a thread moves before a block is added
  int ll_threads = 0;                       // threads of an LL block: 0 by size (ll_threads()), or 32..512
};

class Communicator {
 public:
  static Result<std::unique_ptr<Communicator>> create(const CommOptions& o);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // The SMA over this rank's window, for PyTorch's pluggable allocator.
  Result<void*> alloc(std::uint64_t bytes, cudaStream_t stream);
  Result<bool> free(void* ptr);

  // One collective, queued on `stream`. Sizes as CollCall's (bytes per rank / per peer block).
  // Error: a bad argument, a launch failure, or an earlier call's device timeout.
  Result<bool> run(railcheck::zerobuf::CollKind kind, const void* input, void* output, std::uint64_t bytes,
                   cudaStream_t stream);
  // The device's timeout record, if any kernel has timed out so far (without synchronising).
  Result<bool> check();

  std::uint64_t window_bytes() const { return layout_.window_bytes; }
  // The path a call of `kind` on these buffers takes (what run() would launch).
  railcheck::zerobuf::FastPath path_for(railcheck::zerobuf::CollKind kind, const void* input, const void* output,
                                        std::uint64_t bytes) const;
  // Pins one path (for measuring) or goes back to choosing by size (`force` false).
  void force_path(bool force, railcheck::zerobuf::FastPath path) {
    opt_.fast.force = force;
    opt_.fast.forced = path;
  }
  const railcheck::zerobuf::SmaStats stats() const { return sma_.stats(); }

 private:
  Communicator(const CommOptions& o, WindowLayout layout, VmmWindow own, railcheck::zerobuf::SmaAllocator sma);
  void settle_events();
  Result<bool> run_fast(railcheck::zerobuf::FastPath path, railcheck::zerobuf::FastOp op, std::uint64_t in,
                        std::uint64_t out, std::uint64_t bytes, cudaStream_t stream);
  Result<bool> run_program(railcheck::zerobuf::CollKind kind, std::uint64_t in, std::uint64_t out, std::uint64_t bytes,
                           cudaStream_t stream);
  Error fast_timeout_error(const TimeoutRecord& r) const;

  CommOptions opt_;
  WindowLayout layout_;
  VmmWindow own_;
  std::vector<std::optional<VmmWindow>> peers_;  // indexed by rank; this rank's entry is empty
  std::vector<char*> bases_;                     // every rank's window as mapped here
  railcheck::zerobuf::SmaAllocator sma_;
  railcheck::zerobuf::RankRunner runner_;
  int multiprocessors_ = 1;
  DeviceScratch* scratch_ = nullptr;
  TimeoutRecord* record_ = nullptr;  // pinned, mapped
  TimeoutRecord* record_dev_ = nullptr;
  FastState* fast_state_ = nullptr;  // device memory
  std::uint64_t calls_ = 0;
  // The calls in flight or recent, by number, to name the step a timeout stopped at.
  std::map<std::uint64_t, std::pair<railcheck::zerobuf::CollCall, std::vector<railcheck::zerobuf::FlagStep>>> history_;
  std::map<railcheck::zerobuf::EventId, cudaEvent_t> events_;
  std::optional<Error> failed_;
};

}  // namespace railcheck::hw::zerobuf
