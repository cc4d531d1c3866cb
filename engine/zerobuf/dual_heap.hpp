#pragma once
// The SMA's dual heap (zbccl seed §4.2, §6.1): a rank's window is cut into a small heap (flags,
// signals and other tiny objects: default 512 MiB) and a large heap (tensors), both carved into
// segments on page boundaries (2 MiB: huge pages, the VMM granularity). Keeping the tiny, busy
// objects in their own heap keeps them from fragmenting the tensor pages.
//
//   window: [ front (the flag area) | small heap | large heap ]   all offsets in the window
//
// A segment is a run of whole pages handed to the block pool; releasing it gives the pages back
// (the driver unmaps them: a physical free). Carving is first fit by offset inside one heap.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "engine/core/result.hpp"

namespace railcheck::zerobuf {

// v rounded up to a multiple of `to` (to > 0): page and granule sizes of both heaps.
constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

enum class HeapKind : std::uint8_t { Small, Large };
const char* to_string(HeapKind h);

struct SmaConfig {
  std::uint64_t front_bytes = 64 << 10;           // before the heaps: the flag area
  std::uint64_t small_heap_bytes = 512ULL << 20;  // seed §6.1's default
  std::uint64_t large_heap_bytes = 8ULL << 30;
  std::uint64_t page_bytes = 2ULL << 20;      // segment granularity and alignment (huge page)
  std::uint64_t small_request_max = 1 << 20;  // requests up to this are served from the small heap
  std::uint64_t block_align = 512;            // every block starts and ends on this
  bool borrow_across_heaps = true;            // seed §8.3 (ENABLE_CROSS): a full heap borrows pages

  // The whole window: front, then each heap rounded up to whole pages.
  std::uint64_t window_bytes() const;
  std::uint64_t small_base() const;
  std::uint64_t large_base() const;
};

// Error when a knob is out of range or the knobs disagree (says which and what to give).
std::optional<Error> validate(const SmaConfig& c);

class DualHeap {
 public:
  explicit DualHeap(const SmaConfig& c);

  // Whole pages for `bytes` (rounded up) from heap `h`, first fit; nothing when no run fits.
  std::optional<std::uint64_t> carve(HeapKind h, std::uint64_t bytes);
  // Gives a carved run back (merged with free neighbours).
  void release(HeapKind h, std::uint64_t offset, std::uint64_t bytes);

  std::uint64_t round_pages(std::uint64_t bytes) const;
  std::uint64_t free_bytes(HeapKind h) const;
  std::uint64_t largest_free(HeapKind h) const;
  std::uint64_t capacity(HeapKind h) const;
  // Which heap an offset of the window lies in (front: nothing).
  std::optional<HeapKind> heap_of(std::uint64_t offset) const;

 private:
  std::map<std::uint64_t, std::uint64_t>& runs(HeapKind h) { return h == HeapKind::Small ? small_ : large_; }
  const std::map<std::uint64_t, std::uint64_t>& runs(HeapKind h) const {
    return h == HeapKind::Small ? small_ : large_;
  }
  SmaConfig cfg_;
  std::map<std::uint64_t, std::uint64_t> small_, large_;  // free runs: offset -> bytes
};

}  // namespace railcheck::zerobuf
