#pragma once
// One rank's window on the GPU (zbccl seed §4.2, §6.1): the SMA's layout (engine/zerobuf/
// dual_heap.hpp) fitted to the CUDA VMM allocation granularity, with the flag area of the
// collectives (engine/zerobuf/flag_step.hpp) at offset 0 of the front:
//
//   [ flag area | barrier area | LL area | rest of front | small heap | large heap ]
//                                                              one cuMemCreate, one FD
//
// The barrier and LL areas belong to the fast paths (engine/zerobuf/fast_path.hpp); the same
// layout on every rank, so a peer finds them at the same offsets in every window. The front grows
// to hold them.
//
// The whole window is one physical allocation, mapped once in every rank: the SMA's MapSegment
// and UnmapSegment actions change nothing on the device (a segment is already backed). Mapping
// segments on demand would need a handle exchange per segment with every peer.
#include <cstdint>

#include "engine/core/result.hpp"
#include "engine/zerobuf/dual_heap.hpp"

namespace railcheck::hw::zerobuf {

struct WindowLayout {
  railcheck::zerobuf::SmaConfig sma;
  std::uint32_t nranks = 0;
  std::uint64_t flag_area_bytes = 0;  // at offset 0
  std::uint64_t window_bytes = 0;     // a multiple of the granularity
  // The fast paths' areas (all 0 when they are off); zeroed with the flag area at creation.
  std::uint64_t barrier_area_offset = 0;
  std::uint64_t ll_area_offset = 0;
  std::uint64_t ll_slot_lines = 0;     // lines of one [parity][sender] slot: the largest LL piece
  std::uint64_t front_used_bytes = 0;  // flag, barrier and LL areas: what creation zeroes
};

// Checks the SMA settings (validate()), that the page size is a multiple of the driver's
// granularity (so segments never share a physical page) and that the flag area of `nranks`
// fits in the front. Error: which setting and what to give.
// `ll_max_piece_bytes` > 0 adds the fast paths' areas, sized for LL pieces up to that many bytes
// (the front grows to hold them); 0 leaves them out.
Result<WindowLayout> plan_window(const railcheck::zerobuf::SmaConfig& sma, std::uint64_t granularity,
                                 std::uint32_t nranks, std::uint64_t ll_max_piece_bytes = 0);

// The offset of [ptr, ptr + bytes) in a window mapped at `base`, or an error when any of it lies
// outside (the tensor was not allocated from the zero-buffer pool). `what` names the argument.
Result<std::uint64_t> window_offset(std::uintptr_t base, std::uint64_t window_bytes, std::uintptr_t ptr,
                                    std::uint64_t bytes, const char* what);

}  // namespace railcheck::hw::zerobuf
