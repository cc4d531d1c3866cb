#include "engine/zerobuf/dual_heap.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/engine_assert.hpp"

namespace railcheck::zerobuf {
namespace {

bool pow2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

const char* to_string(HeapKind h) { return h == HeapKind::Small ? "small" : "large"; }

std::uint64_t SmaConfig::small_base() const { return round_up(front_bytes, page_bytes); }
std::uint64_t SmaConfig::large_base() const { return small_base() + round_up(small_heap_bytes, page_bytes); }
std::uint64_t SmaConfig::window_bytes() const { return large_base() + round_up(large_heap_bytes, page_bytes); }

std::optional<Error> validate(const SmaConfig& c) {
  const std::string hint = "see docs/zerobuf.md, SMA settings";
  if (!pow2(c.page_bytes) || c.page_bytes < 4096)
    return Error{fmt::format("SMA page_bytes = {}: a power of two of at least 4096", c.page_bytes), hint};
  if (!pow2(c.block_align) || c.block_align > c.page_bytes)
    return Error{fmt::format("SMA block_align = {}: a power of two no larger than a page", c.block_align), hint};
  if (c.small_heap_bytes < c.page_bytes || c.large_heap_bytes < c.page_bytes)
    return Error{fmt::format("SMA heaps of {} and {} bytes: each needs at least one page ({} B)", c.small_heap_bytes,
                             c.large_heap_bytes, c.page_bytes),
                 hint};
  if (c.small_request_max == 0 || c.small_request_max > c.page_bytes)
    return Error{
        fmt::format("SMA small_request_max = {}: between 1 and one page ({} B)", c.small_request_max, c.page_bytes),
        hint};
  return std::nullopt;
}

DualHeap::DualHeap(const SmaConfig& c) : cfg_(c) {
  small_[c.small_base()] = c.large_base() - c.small_base();
  large_[c.large_base()] = c.window_bytes() - c.large_base();
}

std::uint64_t DualHeap::round_pages(std::uint64_t bytes) const {
  return round_up(std::max<std::uint64_t>(bytes, 1), cfg_.page_bytes);
}

std::optional<std::uint64_t> DualHeap::carve(HeapKind h, std::uint64_t bytes) {
  const std::uint64_t want = round_pages(bytes);
  auto& free = runs(h);
  for (auto it = free.begin(); it != free.end(); ++it) {
    if (it->second < want) continue;
    const std::uint64_t at = it->first, left = it->second - want;
    free.erase(it);
    if (left > 0) free[at + want] = left;
    RAILCHECK_ASSERT(heap_of(at) == h && heap_of(at + want - 1) == h, "a segment is carved from its own heap");
    return at;
  }
  return std::nullopt;
}

void DualHeap::release(HeapKind h, std::uint64_t offset, std::uint64_t bytes) {
  auto& free = runs(h);
  auto [it, inserted] = free.emplace(offset, bytes);
  // A range is released once, and into a gap: it overlaps no free run on either side.
  RAILCHECK_ASSERT(inserted && heap_of(offset) == h, "a segment goes back to its heap once");
  RAILCHECK_ASSERT((std::next(it) == free.end() || offset + bytes <= std::next(it)->first) &&
                       (it == free.begin() || std::prev(it)->first + std::prev(it)->second <= offset),
                   "a released segment overlaps no free run");
  if (auto next = std::next(it); next != free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free.erase(next);
  }
  if (it != free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free.erase(it);
    }
  }
}

std::uint64_t DualHeap::free_bytes(HeapKind h) const {
  std::uint64_t sum = 0;
  for (const auto& [at, n] : runs(h)) sum += n;
  return sum;
}

std::uint64_t DualHeap::largest_free(HeapKind h) const {
  std::uint64_t best = 0;
  for (const auto& [at, n] : runs(h)) best = std::max(best, n);
  return best;
}

std::uint64_t DualHeap::capacity(HeapKind h) const {
  return h == HeapKind::Small ? cfg_.large_base() - cfg_.small_base() : cfg_.window_bytes() - cfg_.large_base();
}

std::optional<HeapKind> DualHeap::heap_of(std::uint64_t offset) const {
  if (offset < cfg_.small_base() || offset >= cfg_.window_bytes()) return std::nullopt;
  return offset < cfg_.large_base() ? HeapKind::Small : HeapKind::Large;
}

}  // namespace railcheck::zerobuf
