#include "engine/zerobuf/sma_allocator.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railcheck::zerobuf {
namespace {

HeapKind other(HeapKind h) { return h == HeapKind::Small ? HeapKind::Large : HeapKind::Small; }
std::size_t index(HeapKind h) { return h == HeapKind::Small ? 0 : 1; }

}  // namespace

Result<SmaAllocator> SmaAllocator::create(const SmaConfig& c) {
  if (auto bad = validate(c)) return *bad;
  return SmaAllocator(c);
}

std::optional<std::uint64_t> SmaAllocator::find_block(HeapKind serves, PoolId pool, std::uint64_t bytes,
                                                      StreamId s) const {
  std::optional<std::uint64_t> best;
  std::uint64_t best_bytes = 0;
  for (const auto& [at, b] : blocks_) {
    if (b.allocated || b.deferred || b.bytes < bytes) continue;
    const Segment& seg = segments_.at(b.segment);
    if (seg.serves != serves || seg.pool != pool) continue;
    // EventController: a use on another stream that is not known to be over covers the block.
    const bool covered =
        std::any_of(b.pending.begin(), b.pending.end(), [&](const PendingEvent& p) { return p.stream != s; });
    if (covered) continue;
    if (!best || b.bytes < best_bytes) {
      best = at;
      best_bytes = b.bytes;
    }
  }
  return best;
}

std::optional<std::uint64_t> SmaAllocator::new_segment(HeapKind from, HeapKind serves, PoolId pool,
                                                       std::uint64_t bytes) {
  const std::uint64_t seg_bytes = heap_.round_pages(bytes);
  const auto at = heap_.carve(from, seg_bytes);
  if (!at) return std::nullopt;
  segments_[*at] = Segment{seg_bytes, from, serves, pool};
  blocks_[*at] = Block{seg_bytes, *at};
  actions_.push_back(MapSegment{*at, seg_bytes, from});
  return at;
}

Allocation SmaAllocator::take(std::uint64_t at, std::uint64_t bytes, StreamId s) {
  Block& b = blocks_.at(at);
  const Segment& seg = segments_.at(b.segment);
  // Split when the rest is still worth a block: any aligned piece in the small heap's segments,
  // at least a small request's worth in the large ones (smaller tails would only fragment).
  const std::uint64_t min_rest = seg.serves == HeapKind::Small ? cfg_.block_align : cfg_.small_request_max;
  if (b.bytes - bytes >= min_rest) {
    Block rest{b.bytes - bytes, b.segment};
    rest.pending = b.pending;  // the tail is covered by the same uses
    blocks_[at + bytes] = rest;
    b.bytes = bytes;
  }
  b.allocated = true;
  b.stream = s;
  b.used_on = {s};
  b.pending.clear();  // every pending use was on `s`: stream order keeps them before the new one
  return Allocation{at, b.bytes, seg.heap, seg.heap != seg.serves};
}

Result<Allocation> SmaAllocator::malloc(std::uint64_t bytes, StreamId s) {
  const std::uint64_t want = round_up(std::max<std::uint64_t>(bytes, 1), cfg_.block_align);
  const HeapKind serves = want <= cfg_.small_request_max ? HeapKind::Small : HeapKind::Large;
  const auto cap = captures_.find(s);
  const PoolId pool = cap == captures_.end() ? 0 : cap->second;
  if (auto at = find_block(serves, pool, want, s)) return take(*at, want, s);
  const std::uint64_t seg_bytes = serves == HeapKind::Small ? cfg_.page_bytes : want;
  if (auto at = new_segment(serves, serves, pool, seg_bytes)) return take(*at, want, s);
  // OOM path (seed §8.3): empty the cache, then borrow from the other heap, then fail.
  const std::uint64_t emptied = empty_cache();
  if (emptied > 0)
    if (auto at = new_segment(serves, serves, pool, seg_bytes)) return take(*at, want, s);
  if (cfg_.borrow_across_heaps)
    if (auto at = new_segment(other(serves), serves, pool, seg_bytes)) return take(*at, want, s);
  return out_of_memory(want, serves, s, emptied);
}

Error SmaAllocator::out_of_memory(std::uint64_t bytes, HeapKind serves, StreamId s, std::uint64_t emptied) const {
  const SmaStats st = stats();
  std::string tried = fmt::format("empty_cache released {} B", emptied);
  if (capturing()) tried = "nothing released: a graph capture is open";
  if (cfg_.borrow_across_heaps) tried += fmt::format(", and the {} heap had no room either", to_string(other(serves)));
  return Error{fmt::format("SMA out of memory: {} B ({} request) on stream {}: small heap {}/{} B reserved, "
                           "large heap {}/{} B reserved, largest free runs {} / {} B; {}",
                           bytes, to_string(serves), s, st.reserved[0], heap_.capacity(HeapKind::Small), st.reserved[1],
                           heap_.capacity(HeapKind::Large), heap_.largest_free(HeapKind::Small),
                           heap_.largest_free(HeapKind::Large), tried),
               "free tensors or give the SMA larger heaps (docs/zerobuf.md)"};
}

Result<bool> SmaAllocator::free(std::uint64_t offset) {
  auto it = blocks_.find(offset);
  if (it == blocks_.end() || !it->second.allocated || it->second.deferred)
    return Error{fmt::format("SMA free of {:#x}: not an allocated block{}", offset,
                             it != blocks_.end() ? " (already freed)" : ""),
                 "free each pointer malloc returned exactly once"};
  if (capturing()) {
    // GraphDeferPools: the captured graph may still name this memory; park the free.
    it->second.deferred = true;
    freeable_.push_back(offset);
    return true;
  }
  release_block(offset);
  return true;
}

void SmaAllocator::release_block(std::uint64_t at) {
  Block& b = blocks_.at(at);
  for (const StreamId s : b.used_on) {
    const EventId e = next_event_++;
    actions_.push_back(RecordEvent{e, s, at});
    b.pending.push_back(PendingEvent{e, s});
  }
  b.allocated = false;
  b.deferred = false;
  b.used_on.clear();
  merge_free(at);
}

void SmaAllocator::merge_free(std::uint64_t at) {
  auto it = blocks_.find(at);
  auto mergeable = [&](const Block& x) { return !x.allocated && !x.deferred && x.segment == it->second.segment; };
  if (auto next = std::next(it); next != blocks_.end() && mergeable(next->second)) {
    it->second.bytes += next->second.bytes;
    it->second.pending.insert(it->second.pending.end(), next->second.pending.begin(), next->second.pending.end());
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    auto prev = std::prev(it);
    if (mergeable(prev->second)) {
      prev->second.bytes += it->second.bytes;
      prev->second.pending.insert(prev->second.pending.end(), it->second.pending.begin(), it->second.pending.end());
      blocks_.erase(it);
    }
  }
}

Result<bool> SmaAllocator::record_stream(std::uint64_t offset, StreamId s) {
  auto it = blocks_.find(offset);
  if (it == blocks_.end() || !it->second.allocated)
    return Error{fmt::format("SMA record_stream on {:#x}: not an allocated block", offset),
                 "record a stream on a live tensor only"};
  auto& used = it->second.used_on;
  if (std::find(used.begin(), used.end(), s) == used.end()) used.push_back(s);
  return true;
}

void SmaAllocator::event_done(EventId e) {
  for (auto& [at, b] : blocks_) std::erase_if(b.pending, [&](const PendingEvent& p) { return p.event == e; });
}

Result<PoolId> SmaAllocator::begin_capture(StreamId s, PoolId reuse) {
  if (captures_.contains(s))
    return Error{fmt::format("SMA capture on stream {}: already capturing", s), "end the capture first"};
  const PoolId pool = reuse != 0 ? reuse : next_pool_++;
  if (reuse >= next_pool_)
    return Error{fmt::format("SMA capture into pool {}: no such private pool", reuse), "pass 0 for a new pool"};
  captures_[s] = pool;
  return pool;
}

Result<bool> SmaAllocator::end_capture(StreamId s) {
  if (captures_.erase(s) == 0)
    return Error{fmt::format("SMA end of capture on stream {}: not capturing", s), "begin_capture first"};
  if (!captures_.empty()) return true;
  // The last capture is over: the parked frees happen now.
  for (const std::uint64_t at : freeable_) release_block(at);
  freeable_.clear();
  return true;
}

Result<bool> SmaAllocator::release_pool(PoolId pool) {
  for (const auto& [s, p] : captures_)
    if (p == pool)
      return Error{fmt::format("SMA release of pool {}: stream {} is capturing into it", pool, s),
                   "end the capture first"};
  for (auto& [at, seg] : segments_)
    if (seg.pool == pool) seg.pool = 0;
  return true;
}

std::uint64_t SmaAllocator::empty_cache() {
  if (capturing()) return 0;  // GraphDeferPools: no physical free while a graph is being captured
  std::uint64_t released = 0;
  for (auto it = segments_.begin(); it != segments_.end();) {
    const auto b = blocks_.find(it->first);
    const bool whole_free = b->second.bytes == it->second.bytes && !b->second.allocated && !b->second.deferred &&
                            b->second.pending.empty() && it->second.pool == 0;
    if (!whole_free) {
      ++it;
      continue;
    }
    actions_.push_back(UnmapSegment{it->first, it->second.bytes, it->second.heap});
    heap_.release(it->second.heap, it->first, it->second.bytes);
    released += it->second.bytes;
    blocks_.erase(b);
    it = segments_.erase(it);
  }
  return released;
}

std::vector<SmaAction> SmaAllocator::drain() {
  std::vector<SmaAction> out;
  out.swap(actions_);
  return out;
}

SmaStats SmaAllocator::stats() const {
  SmaStats st;
  for (const auto& [at, seg] : segments_) st.reserved[index(seg.heap)] += seg.bytes;
  st.segments = segments_.size();
  for (const auto& [at, b] : blocks_) {
    if (b.allocated) st.allocated += b.bytes;
    st.pending_events += b.pending.size();
    st.deferred += b.deferred ? 1 : 0;
  }
  st.blocks = blocks_.size();
  return st;
}

}  // namespace railcheck::zerobuf
