#pragma once
// SMA, the secondary memory allocator (zbccl seed §4.2, §5.2, §6.2, §8.3): a caching allocator
// over one rank's window (dual_heap.hpp), so that every tensor it hands out lies in memory the
// peers have mapped and the collectives can read and write in place.
//
//   block pool   blocks tile segments; a request takes the best-fitting free block (split if it
//                leaves a usable remainder); a freed block merges with free neighbours
//   EventController
//                a free records an event on every stream that used the block (its own, and those
//                named by record_stream); until an event completes, the block may go back only
//                to that event's stream (stream order makes that safe), never to another one
//   GraphDeferPools
//                during a graph capture the capturing stream allocates from the graph's private
//                pool; frees are parked (the freeable list) until the last capture ends, and
//                nothing is released to the heaps while any capture is open
//   OOM path     no fitting block and no room for a segment: empty the cache (release segments
//                that are wholly free and settled), retry; then borrow pages from the other heap
//                (if allowed); then fail with an error that says what was asked and what is left
//
// Sans-IO: offsets in the window, streams and events are the driver's numbers. What the driver
// must do (record an event on a stream; map or unmap a segment's pages) is queued as actions and
// handed over by drain(). The driver reports completed events with event_done().
#include <cstdint>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/zerobuf/dual_heap.hpp"

namespace railcheck::zerobuf {

using StreamId = std::uint64_t;
using EventId = std::uint64_t;
using PoolId = std::uint32_t;  // 0: the eager pool; above: a graph's private pool

struct RecordEvent {
  EventId event = 0;
  StreamId stream = 0;
  std::uint64_t block = 0;  // offset of the freed block (for the driver's logs and the checker)
};
struct MapSegment {
  std::uint64_t offset = 0, bytes = 0;
  HeapKind heap = HeapKind::Small;
};
struct UnmapSegment {
  std::uint64_t offset = 0, bytes = 0;
  HeapKind heap = HeapKind::Small;
};
using SmaAction = std::variant<RecordEvent, MapSegment, UnmapSegment>;

struct Allocation {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;          // rounded up to block_align
  HeapKind heap = HeapKind::Small;  // the heap its pages come from
  bool borrowed = false;            // served from the other heap's pages (seed §8.3)
};

struct PendingEvent {
  EventId event = 0;
  StreamId stream = 0;
};

struct Block {
  std::uint64_t bytes = 0;
  std::uint64_t segment = 0;  // offset of its segment
  bool allocated = false;
  bool deferred = false;              // freed during a capture, parked
  StreamId stream = 0;                // allocated: the stream it was handed to
  std::vector<StreamId> used_on;      // allocated: its stream, then record_stream()'s
  std::vector<PendingEvent> pending;  // free: uses not known to be over
};

struct Segment {
  std::uint64_t bytes = 0;
  HeapKind heap = HeapKind::Small;    // where its pages are
  HeapKind serves = HeapKind::Small;  // which requests it serves
  PoolId pool = 0;
};

struct SmaStats {
  std::uint64_t allocated = 0;         // bytes in allocated blocks
  std::uint64_t reserved[2] = {0, 0};  // bytes of segments, by heap (Small, Large)
  std::uint64_t segments = 0, blocks = 0, pending_events = 0, deferred = 0;
};

class SmaAllocator {
 public:
  static Result<SmaAllocator> create(const SmaConfig& c);

  Result<Allocation> malloc(std::uint64_t bytes, StreamId stream);
  // Error: an offset that is not an allocated block (unknown or freed twice).
  Result<bool> free(std::uint64_t offset);
  // The block is also used on `stream` (torch's record_stream): its free will wait for it.
  Result<bool> record_stream(std::uint64_t offset, StreamId stream);
  void event_done(EventId e);
  // Capture on `stream` into private pool `reuse` (an earlier graph's), or a new one (0).
  Result<PoolId> begin_capture(StreamId stream, PoolId reuse = 0);
  Result<bool> end_capture(StreamId stream);
  // The graph that owned `pool` is gone: its segments join the eager pool.
  Result<bool> release_pool(PoolId pool);
  // Releases every eager segment that is one free, settled block; nothing during a capture.
  std::uint64_t empty_cache();

  std::vector<SmaAction> drain();
  bool capturing() const { return !captures_.empty(); }
  const std::map<std::uint64_t, Block>& blocks() const { return blocks_; }
  const std::map<std::uint64_t, Segment>& segments() const { return segments_; }
  const SmaConfig& config() const { return cfg_; }
  const DualHeap& heap() const { return heap_; }
  SmaStats stats() const;

 private:
  explicit SmaAllocator(const SmaConfig& c) : cfg_(c), heap_(c) {}
  std::optional<std::uint64_t> find_block(HeapKind serves, PoolId pool, std::uint64_t bytes, StreamId s) const;
  std::optional<std::uint64_t> new_segment(HeapKind from, HeapKind serves, PoolId pool, std::uint64_t bytes);
  Allocation take(std::uint64_t at, std::uint64_t bytes, StreamId s);
  void release_block(std::uint64_t at);
  void merge_free(std::uint64_t at);
  Error out_of_memory(std::uint64_t bytes, HeapKind serves, StreamId s, std::uint64_t emptied) const;

  SmaConfig cfg_;
  DualHeap heap_;
  std::map<std::uint64_t, Segment> segments_;
  std::map<std::uint64_t, Block> blocks_;
  std::map<StreamId, PoolId> captures_;  // capturing stream -> its private pool
  std::vector<std::uint64_t> freeable_;  // frees parked during captures
  std::vector<SmaAction> actions_;
  EventId next_event_ = 1;
  PoolId next_pool_ = 1;
};

}  // namespace railcheck::zerobuf
