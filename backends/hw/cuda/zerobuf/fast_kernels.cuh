#pragma once
// The fast paths of the zero-buffer collectives on the device (issue 29): the LL kernel (small
// messages, flags carried in the data) and the direct kernel (large messages, zero copy, two
// block-level barriers). The protocols are written down, shared with the checker, in
// engine/zerobuf/fast_path.hpp; this file only executes them.
//
// Both kernels keep their epochs in device memory (FastState) and advance them themselves (the
// last block to finish bumps the counter), so a CUDA graph that captured a call replays it with
// a fresh epoch each time. Neither needs a cooperative launch or a grid-wide barrier; one
// kernel per collective, nothing on the host between calls.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/hw/cuda/zerobuf/flag_kernels.cuh"
#include "engine/zerobuf/fast_path.hpp"

namespace railcheck::hw::zerobuf {

// Device memory of one communicator, zeroed at creation.
struct FastState {
  std::uint32_t ll_epoch;  // the last finished LL call's epoch (0: none yet)
  std::uint32_t ll_blocks_done;
  std::uint64_t direct_calls;  // direct calls finished
  std::uint32_t direct_blocks_done;
  std::uint32_t pad;
};

struct FastArgs {
  railcheck::zerobuf::FastOp op = railcheck::zerobuf::FastOp::AllGather;
  std::uint32_t rank = 0, nranks = 0;
  std::uint64_t bytes = 0;  // CollCall's meaning
  char* local = nullptr;
  char* peers[kMaxRanks] = {};  // peers[rank] == local
  std::uint64_t input_offset = 0, output_offset = 0;
  std::uint64_t ll_area_offset = 0;  // in every window (the same layout on every rank)
  std::uint64_t ll_slot_lines = 0;
  std::uint64_t barrier_area_offset = 0;
  std::uint64_t timeout_ns = 0;
  DeviceScratch* scratch = nullptr;
  TimeoutRecord* record = nullptr;
  FastState* state = nullptr;
};

constexpr int kLlThreads = 512;  // the most threads an LL block runs (ll_threads picks fewer)
constexpr int kDirectThreads = 512;
constexpr int kDirectUnroll = 4;  // 16-byte units a direct-kernel thread has in flight at once

// Blocks for an LL call of `threads` threads each: one thread a line of the piece, at most one
// block per multiprocessor (every block must be resident: blocks spin on lines that peers' blocks
// write).
int ll_blocks(std::uint64_t piece_bytes, int multiprocessors, int threads);
// Threads of an LL block: `configured` where it is set (32..512), else 256 while that many
// threads a block on every multiprocessor still cover the piece in one pass, 512 beyond
// (2 x H200: 256 took 0.85-0.93x the time of 512 from 8 KiB to 256 KiB, 1.1-1.15x at 1 MiB where
// it needs two passes; docs/zerobuf.md, "Launch shapes").
int ll_threads(std::uint64_t piece_bytes, int multiprocessors, int configured);
// Blocks for a direct call: a function of the size only (every rank must use the same grid:
// block b of one rank meets block b of the others): enough that no thread moves more than
// `units_per_thread` 16-byte units, at most `max_blocks`.
int direct_blocks(railcheck::zerobuf::FastOp op, std::uint64_t bytes, std::uint32_t nranks, int max_blocks,
                  int units_per_thread);

cudaError_t launch_ll(const FastArgs& args, int blocks, int threads, cudaStream_t stream);
cudaError_t launch_direct(const FastArgs& args, int blocks, cudaStream_t stream);
// The LL two-shot all-reduce (fast_path.hpp): `blocks` from ll_blocks of the largest part.
cudaError_t launch_ll_two_shot(const FastArgs& args, int blocks, int threads, cudaStream_t stream);

}  // namespace railcheck::hw::zerobuf
