#include "backends/hw/cuda/zerobuf/window_layout.hpp"

#include <fmt/format.h>

#include "backends/hw/cuda/zerobuf/window_handle.hpp"
#include "engine/zerobuf/fast_path.hpp"
#include "engine/zerobuf/flag_step.hpp"

namespace railcheck::hw::zerobuf {

Result<WindowLayout> plan_window(const railcheck::zerobuf::SmaConfig& sma, std::uint64_t granularity,
                                 std::uint32_t nranks, std::uint64_t ll_max_piece_bytes) {
  if (auto e = railcheck::zerobuf::validate(sma)) return *e;
  if (nranks == 0 || nranks > kMaxRanks)
    return Error{fmt::format("zerobuf window: {} ranks", nranks), fmt::format("1 to {} ranks", kMaxRanks)};
  if (granularity == 0 || sma.page_bytes % granularity != 0)
    return Error{fmt::format("zerobuf window: SMA page of {} B is not a multiple of the CUDA VMM granularity {} B",
                             sma.page_bytes, granularity),
                 "give a page size that is a multiple of cuMemGetAllocationGranularity (2 MiB on H100/H200)"};
  WindowLayout w;
  w.sma = sma;
  w.nranks = nranks;
  w.flag_area_bytes = railcheck::zerobuf::flag_area_bytes(nranks);
  if (w.flag_area_bytes > sma.front_bytes)
    return Error{fmt::format("zerobuf window: the flag area of {} ranks needs {} B, the front has {} B", nranks,
                             w.flag_area_bytes, sma.front_bytes),
                 "give a larger front_bytes"};
  w.front_used_bytes = w.flag_area_bytes;
  if (ll_max_piece_bytes > 0) {
    if (ll_max_piece_bytes % 4 != 0 || ll_max_piece_bytes > (1ULL << 30))
      return Error{fmt::format("zerobuf window: an LL limit of {} B", ll_max_piece_bytes),
                   "a multiple of 4 bytes up to 1 GiB (docs/zerobuf.md, Thresholds)"};
    constexpr std::uint64_t kAlign = 4096;  // areas start on their own pages of the front
    const auto up = [](std::uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; };
    w.barrier_area_offset = up(w.flag_area_bytes);
    w.ll_area_offset = up(w.barrier_area_offset + railcheck::zerobuf::barrier_area_bytes(nranks));
    w.ll_slot_lines = railcheck::zerobuf::ll_lines(ll_max_piece_bytes);
    w.front_used_bytes = w.ll_area_offset + railcheck::zerobuf::ll_area_bytes(nranks, w.ll_slot_lines);
    if (w.sma.front_bytes < w.front_used_bytes) w.sma.front_bytes = w.front_used_bytes;
  }
  w.window_bytes = w.sma.window_bytes();  // whole pages after the front: a multiple of the page
  return w;
}

Result<std::uint64_t> window_offset(std::uintptr_t base, std::uint64_t window_bytes, std::uintptr_t ptr,
                                    std::uint64_t bytes, const char* what) {
  if (ptr < base || ptr - base > window_bytes || bytes > window_bytes - (ptr - base))
    return Error{fmt::format("zerobuf: {} [{:#x}, +{} B) is outside this rank's window [{:#x}, +{} B)", what, ptr,
                             bytes, base, window_bytes),
                 "allocate collective tensors from the zerobuf pool (ZeroBuf.pool() in scripts/gpu/zerobuf_torch.py)"};
  return static_cast<std::uint64_t>(ptr - base);
}

}  // namespace railcheck::hw::zerobuf
