// The SMA allocator: dual heap with page-aligned segments, split and merge, event-guarded reuse
// across streams, frees parked during graph capture, and the OOM path (empty cache, borrow, a
// clean error).
#include "engine/zerobuf/sma_allocator.hpp"

#include <catch2/catch.hpp>
#include <set>

#include "engine/core/rng.hpp"

using namespace railcheck;
using namespace railcheck::zerobuf;

namespace {

// A tiny window: 4 KiB pages, a 2-page small heap and a 4-page large heap.
SmaConfig tiny(bool borrow = true) {
  SmaConfig c;
  c.front_bytes = 4096;
  c.page_bytes = 4096;
  c.small_heap_bytes = 2 * 4096;
  c.large_heap_bytes = 4 * 4096;
  c.small_request_max = 1024;
  c.block_align = 256;
  c.borrow_across_heaps = borrow;
  return c;
}

SmaAllocator make(const SmaConfig& c) {
  auto a = SmaAllocator::create(c);
  REQUIRE(a.ok());
  return std::move(a.value());
}

std::vector<RecordEvent> events_of(std::vector<SmaAction> actions) {
  std::vector<RecordEvent> out;
  for (const auto& a : actions)
    if (const auto* e = std::get_if<RecordEvent>(&a)) out.push_back(*e);
  return out;
}

// Blocks tile every segment, segments lie inside their heap, nothing overlaps.
void check_tiling(const SmaAllocator& a) {
  for (const auto& [at, seg] : a.segments()) {
    REQUIRE(at % a.config().page_bytes == 0);
    REQUIRE(a.heap().heap_of(at) == seg.heap);
    REQUIRE(a.heap().heap_of(at + seg.bytes - 1) == seg.heap);
    std::uint64_t next = at;
    for (auto it = a.blocks().find(at); it != a.blocks().end() && it->second.segment == at; ++it) {
      REQUIRE(it->first == next);
      REQUIRE(it->first % a.config().block_align == 0);
      next += it->second.bytes;
    }
    REQUIRE(next == at + seg.bytes);
  }
}

}  // namespace

TEST_CASE("small requests come from the small heap, large ones from page-aligned large segments") {
  SmaAllocator a = make(tiny());
  const SmaConfig c = a.config();
  auto s = a.malloc(100, 1);
  REQUIRE(s.ok());
  CHECK(s->heap == HeapKind::Small);
  CHECK(s->bytes == 256);
  CHECK(s->offset >= c.small_base());
  CHECK(s->offset < c.large_base());
  auto l = a.malloc(5000, 1);
  REQUIRE(l.ok());
  CHECK(l->heap == HeapKind::Large);
  CHECK(l->offset % c.page_bytes == 0);
  CHECK(a.stats().reserved[1] == 2 * 4096);  // 5000 B rounds up to two pages
  check_tiling(a);
}

TEST_CASE("split blocks merge back when freed, and the whole segment is released by empty_cache") {
  SmaAllocator a = make(tiny());
  std::vector<std::uint64_t> got;
  for (int i = 0; i < 4; ++i) got.push_back(a.malloc(1000, 7)->offset);
  CHECK(a.stats().segments == 1);
  check_tiling(a);
  for (auto off : got) REQUIRE(a.free(off).ok());
  check_tiling(a);
  CHECK(a.stats().blocks == 1);  // merged into one block again
  // Each free recorded an event on stream 7; until they complete the segment stays.
  auto ev = events_of(a.drain());
  CHECK(ev.size() == 4);
  CHECK(a.empty_cache() == 0);
  for (const auto& e : ev) a.event_done(e.event);
  CHECK(a.empty_cache() == 4096);
  CHECK(a.stats().segments == 0);
  CHECK(a.heap().free_bytes(HeapKind::Small) == 2 * 4096);
}

TEST_CASE("a freed block goes back to its own stream at once but to another only after its events") {
  SmaAllocator a = make(tiny());
  const auto x = a.malloc(4096, 1).value();
  REQUIRE(a.free(x.offset).ok());
  const auto ev = events_of(a.drain());
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].stream == 1);
  // Same stream: reused (stream order protects it).
  CHECK(a.malloc(4096, 1)->offset == x.offset);
  REQUIRE(a.free(x.offset).ok());
  const auto ev2 = events_of(a.drain());
  // Another stream: a fresh segment instead, while the event is pending.
  const auto y = a.malloc(4096, 2).value();
  CHECK(y.offset != x.offset);
  REQUIRE(a.free(y.offset).ok());
  a.event_done(ev2[0].event);
  CHECK(a.malloc(4096, 3)->offset == x.offset);
}

TEST_CASE("record_stream makes a free wait for every stream that used the block") {
  SmaAllocator a = make(tiny());
  const auto x = a.malloc(4096, 1).value();
  REQUIRE(a.record_stream(x.offset, 2).ok());
  REQUIRE(a.free(x.offset).ok());
  const auto ev = events_of(a.drain());
  REQUIRE(ev.size() == 2);
  CHECK(((ev[0].stream == 1 && ev[1].stream == 2) || (ev[0].stream == 2 && ev[1].stream == 1)));
  // Stream 1 cannot have it back while stream 2's use may still run.
  CHECK(a.malloc(4096, 1)->offset != x.offset);
  for (const auto& e : ev)
    if (e.stream == 2) a.event_done(e.event);
  CHECK(a.malloc(4096, 1)->offset == x.offset);
  CHECK_FALSE(a.record_stream(0x12345, 2).ok());
}

TEST_CASE("during a graph capture frees are parked, the graph allocates from its private pool, nothing is released") {
  SmaAllocator a = make(tiny());
  const auto eager = a.malloc(4096, 1).value();
  const PoolId pool = a.begin_capture(5).value();
  CHECK(pool > 0);
  const auto g = a.malloc(4096, 5).value();
  CHECK(g.offset != eager.offset);
  CHECK(a.segments().at(g.offset).pool == pool);
  REQUIRE(a.free(eager.offset).ok());
  REQUIRE(a.free(g.offset).ok());
  CHECK(a.stats().deferred == 2);
  CHECK_FALSE(a.free(g.offset).ok());  // parked is not free: a second free is still an error
  // No physical free while capturing, even asked.
  a.drain();
  CHECK(a.empty_cache() == 0);
  for (const auto& act : a.drain()) CHECK_FALSE(std::holds_alternative<UnmapSegment>(act));
  // The parked block is not handed out again during the capture.
  CHECK(a.malloc(4096, 5)->offset != g.offset);
  REQUIRE(a.end_capture(5).ok());
  CHECK(a.stats().deferred == 0);
  CHECK_FALSE(a.end_capture(5).ok());
  // The private pool's memory serves only its graph until the graph is released.
  for (const auto& e : events_of(a.drain())) a.event_done(e.event);
  CHECK(a.malloc(4096, 5)->offset != g.offset);
  REQUIRE(a.release_pool(pool).ok());
  CHECK(a.empty_cache() > 0);
  check_tiling(a);
}

TEST_CASE("OOM: empty the cache first, then borrow from the other heap, then a clean error") {
  SECTION("empty_cache releases cached segments when a request needs their pages") {
    SmaAllocator a = make(tiny(false));
    const auto x = a.malloc(2 * 4096, 1).value();
    const auto y = a.malloc(2 * 4096, 1).value();  // the large heap is full: two 2-page segments
    REQUIRE(a.free(x.offset).ok());
    REQUIRE(a.free(y.offset).ok());
    for (const auto& e : events_of(a.drain())) a.event_done(e.event);
    // Three pages: no cached block is that large (segments never merge), no page is left.
    const auto z = a.malloc(3 * 4096, 1);
    REQUIRE(z.ok());
    bool unmapped = false;
    for (const auto& act : a.drain()) unmapped = unmapped || std::holds_alternative<UnmapSegment>(act);
    CHECK(unmapped);
    CHECK(a.stats().segments == 1);
  }
  SECTION("a full small heap borrows a large-heap page, and the other way round") {
    SmaAllocator a = make(tiny(true));
    std::vector<Allocation> got;
    for (int i = 0; i < 8 * 3; ++i) {  // 1 KiB each: 4 per page; 2 small pages, then borrowed ones
      auto r = a.malloc(1024, 1);
      REQUIRE(r.ok());
      got.push_back(r.value());
    }
    CHECK(got[7].heap == HeapKind::Small);
    CHECK_FALSE(got[7].borrowed);
    CHECK(got[8].heap == HeapKind::Large);
    CHECK(got[8].borrowed);
    check_tiling(a);
  }
  SECTION("without borrowing, a full heap is an OOM error that says what is left") {
    SmaAllocator a = make(tiny(false));
    for (int i = 0; i < 8; ++i) REQUIRE(a.malloc(1024, 1).ok());
    const auto before = a.stats();
    const auto r = a.malloc(1024, 1);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message(), Catch::Contains("out of memory") && Catch::Contains("small heap 8192/8192"));
    CHECK(a.stats().allocated == before.allocated);
    check_tiling(a);
  }
  SECTION("a request larger than both heaps fails after trying both") {
    SmaAllocator a = make(tiny(true));
    const auto r = a.malloc(64 * 4096, 1);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message(), Catch::Contains("small heap had no room either"));
  }
}

TEST_CASE("random malloc/free/record_stream/event sequences keep blocks tiled and never hand out a covered block") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    SeededRng rng(seed);
    SmaAllocator a = make(tiny(rng.below(2) == 0));
    struct Live {
      std::uint64_t offset, bytes;
    };
    std::vector<Live> live;
    std::vector<RecordEvent> pending;
    // Shadow: uses still running, by (offset range, stream), until their event completes.
    struct Use {
      std::uint64_t offset, bytes;
      StreamId stream;
      EventId event;
    };
    std::vector<Use> running;
    std::map<std::uint64_t, std::vector<StreamId>> streams;
    for (int step = 0; step < 300; ++step) {
      const auto op = rng.below(4);
      if (op == 0 || live.empty()) {
        const StreamId s = 1 + rng.below(3);
        const std::uint64_t bytes = rng.below(2) == 0 ? 1 + rng.below(1024) : 1 + rng.below(3 * 4096);
        auto r = a.malloc(bytes, s);
        if (!r) continue;
        for (const auto& l : live)
          if (l.offset < r->offset + r->bytes && r->offset < l.offset + l.bytes) FAIL("overlaps a live block");
        for (const auto& u : running)
          if (u.stream != s && u.offset < r->offset + r->bytes && r->offset < u.offset + u.bytes)
            FAIL("block handed to stream " << s << " while stream " << u.stream << " may still use it");
        live.push_back({r->offset, r->bytes});
        streams[r->offset] = {s};
      } else if (op == 1) {
        const auto i = rng.below(live.size());
        REQUIRE(a.free(live[i].offset).ok());
        for (const auto& e : events_of(a.drain()))
          running.push_back({live[i].offset, live[i].bytes, e.stream, e.event});
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op == 2) {
        const auto& l = live[rng.below(live.size())];
        REQUIRE(a.record_stream(l.offset, 1 + rng.below(3)).ok());
      } else if (!running.empty()) {
        // An event completes with every earlier one on its stream (stream order).
        const Use done = running[rng.below(running.size())];
        std::erase_if(running, [&](const Use& u) {
          const bool over = u.stream == done.stream && u.event <= done.event;
          if (over) a.event_done(u.event);
          return over;
        });
      }
      a.drain();
      check_tiling(a);
      if (rng.below(20) == 0) a.empty_cache();
    }
  }
}

TEST_CASE("bad settings are refused with the knob named") {
  SmaConfig c = tiny();
  c.page_bytes = 3000;
  CHECK_THAT(SmaAllocator::create(c).error().message(), Catch::Contains("page_bytes"));
  c = tiny();
  c.small_request_max = 8192;
  CHECK_THAT(SmaAllocator::create(c).error().message(), Catch::Contains("small_request_max"));
}
