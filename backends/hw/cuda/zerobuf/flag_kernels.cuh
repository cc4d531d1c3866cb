#pragma once
// The device executor of the zero-buffer flag programs (engine/zerobuf/collective_program.hpp):
// one cooperative kernel per collective call runs the rank's FlagSteps in order, reading and
// writing the peers' windows directly (zbccl seed §4.3, §5.3).
//
//   Post   thread 0 of block 0 makes every earlier store visible system-wide, stores the offset,
//          then the epoch (st.release.sys) into the peer's flag slot for this rank
//   Wait   thread 0 of block 0 spins on its own slot (ld.acquire.sys) until the epoch reaches the
//          step's (flag_satisfies), then shares the published offset with the grid; past
//          `timeout_ns` (%globaltimer) it records a timeout and every block stops (seed §8.2)
//   Write, Read (copy or f32 sum), Local
//          every thread of the grid takes a share; a grid barrier ends the step, so the next
//          Post only publishes whole data and the next step reads only finished data
//
// A communicator whose kernel timed out is failed for good: later kernels return at once
// (`failed` is sticky), and the host turns the record into the RankRunner's timeout error.
// Calls of one communicator must be ordered on one stream, like NCCL's.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/hw/cuda/zerobuf/window_handle.hpp"
#include "engine/zerobuf/flag_step.hpp"

namespace railcheck::hw::zerobuf {

// Passed by value as a kernel parameter, so consecutive calls queued on a stream never share a
// program buffer. Kept under the classic 4 KiB parameter limit (with KernelArgs): 64 steps hold
// every collective up to 7 ranks (an all-reduce on n ranks has 2 x (5(n-1) + 1) steps).
constexpr std::uint32_t kMaxSteps = 64;

struct DeviceProgram {
  railcheck::zerobuf::FlagStep steps[kMaxSteps];
  std::uint32_t nsteps = 0;
};

// Written by the device on a timeout, read by the host (mapped pinned memory). `state` goes
// 0 -> 2 once the fields are written.
struct TimeoutRecord {
  std::uint32_t state;
  std::uint32_t pc;
  std::uint64_t observed;
  std::uint64_t waited_ns;
  std::uint64_t call_no;
  // The fast paths (fast_kernels.cuh) fill these too; the flag program leaves `path` 0 and
  // names its step by `pc`.
  std::uint32_t path;  // railcheck::zerobuf::FastPath
  std::uint32_t peer;  // the rank waited for
  std::uint32_t op;    // railcheck::zerobuf::FastOp
  std::uint32_t pad;
  std::uint64_t expected;  // the epoch waited for
};

// Device-side scratch of one communicator: the offsets the last Waits read, `failed`, and
// `claimed` (the first timeout claims the record here: atomics on mapped host memory are not
// portable over PCIe).
struct DeviceScratch {
  std::uint64_t published[railcheck::zerobuf::kFlagKinds][kMaxRanks];
  std::uint32_t failed;
  std::uint32_t claimed;
};

struct KernelArgs {
  char* local = nullptr;        // this rank's window
  char* peers[kMaxRanks] = {};  // every rank's window as mapped here (peers[rank] == local)
  std::uint32_t rank = 0, nranks = 0;
  std::uint64_t timeout_ns = 0;
  std::uint64_t call_no = 0;
  DeviceScratch* scratch = nullptr;  // device memory
  TimeoutRecord* record = nullptr;   // mapped pinned host memory, device address
};

static_assert(sizeof(DeviceProgram) + sizeof(KernelArgs) <= 4096, "kernel parameters over 4 KiB");

// Blocks to use for a program moving at most `max_bytes` in one step: one per 256 KiB, at
// least 1, at most one per multiprocessor (every block must be resident: cooperative launch).
int program_blocks(std::uint64_t max_bytes, int multiprocessors);
constexpr int kProgramThreads = 512;

// Queues the kernel on `stream`. Returns the launch's error (cudaSuccess when queued).
cudaError_t launch_program(const DeviceProgram& program, const KernelArgs& args, int blocks, cudaStream_t stream);

}  // namespace railcheck::hw::zerobuf
