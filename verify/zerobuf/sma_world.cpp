#include "verify/zerobuf/sma_world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "engine/core/state_hash.hpp"

namespace railcheck::verify::zerobuf {

using namespace railcheck::zerobuf;

namespace {

constexpr std::array<std::pair<SmaMutation, std::string_view>, 5> kSmaMutations = {
    {{SmaMutation::None, "none"},
     {SmaMutation::EarlyEventDone, "early-event-done"},
     {SmaMutation::CaptureNotTold, "capture-not-told"},
     {SmaMutation::KeepAfterFree, "keep-after-free"},
     {SmaMutation::MapOnePageShort, "map-one-page-short"}}};

bool overlaps(std::uint64_t a, std::uint64_t an, std::uint64_t b, std::uint64_t bn) { return a < b + bn && b < a + an; }

}  // namespace

std::string_view to_string(SmaMutation m) {
  for (const auto& [k, name] : kSmaMutations)
    if (k == m) return name;
  return "?";
}

std::optional<SmaMutation> parse_sma_mutation(std::string_view s) {
  for (const auto& [k, name] : kSmaMutations)
    if (name == s) return k;
  return std::nullopt;
}

std::string_view sma_mutation_names() {
  return "none, early-event-done, capture-not-told, keep-after-free, map-one-page-short";
}

std::string describe(const SmaModel& m) {
  return fmt::format("{} stream(s), {} operations, up to {} live blocks, {}, borrowing {}{}", m.streams, m.ops,
                     m.live_max, m.capture ? "one graph capture" : "no capture", m.borrow ? "on" : "off",
                     m.mutation == SmaMutation::None ? "" : fmt::format(", mutation {}", to_string(m.mutation)));
}

SmaConfig sma_world_config(const SmaModel& m) {
  SmaConfig c;
  c.front_bytes = 4096;
  c.page_bytes = 4096;
  c.small_heap_bytes = 4096;
  c.large_heap_bytes = 3 * 4096;
  c.small_request_max = 1024;
  c.block_align = 512;
  c.borrow_across_heaps = m.borrow;
  return c;
}

std::string to_string(const SmaChoice& c) {
  switch (c.kind) {
    case SmaChoice::Kind::Malloc: return fmt::format("malloc s{} {}", c.a, SmaWorld::kSizes[c.b]);
    case SmaChoice::Kind::Free: return fmt::format("free #{}", c.a);
    case SmaChoice::Kind::Record: return fmt::format("record #{} s{}", c.a, c.b);
    case SmaChoice::Kind::EventDone: return fmt::format("event s{}", c.a);
    case SmaChoice::Kind::EmptyCache: return "empty-cache";
    case SmaChoice::Kind::BeginCapture: return "begin-capture";
    case SmaChoice::Kind::EndCapture: return "end-capture";
  }
  return "?";
}

std::optional<SmaChoice> parse_sma_choice(std::string_view s) {
  using K = SmaChoice::Kind;
  for (const K k : {K::Malloc, K::Free, K::Record, K::EventDone, K::EmptyCache, K::BeginCapture, K::EndCapture})
    for (std::uint8_t a = 0; a < 8; ++a)
      for (std::uint8_t b = 0; b < 3; ++b)
        if (to_string(SmaChoice{k, a, b}) == s) return SmaChoice{k, a, b};
  return std::nullopt;
}

SmaWorld::SmaWorld(const SmaModel& m) : m_(m), sma_(SmaAllocator::create(sma_world_config(m)).value()) {}

std::vector<SmaChoice> SmaWorld::choices() const {
  using K = SmaChoice::Kind;
  std::vector<SmaChoice> out;
  if (ops_used_ < m_.ops) {
    if (live_.size() < m_.live_max)
      for (std::uint8_t s = 0; s < m_.streams; ++s)
        for (std::uint8_t c = 0; c < 3; ++c) out.push_back(SmaChoice{K::Malloc, s, c});
    for (std::uint8_t i = 0; i < live_.size(); ++i) {
      out.push_back(SmaChoice{K::Free, i, 0});
      for (std::uint8_t t = 0; t < m_.streams; ++t)
        if (std::find(live_[i].used.begin(), live_[i].used.end(), t) == live_[i].used.end())
          out.push_back(SmaChoice{K::Record, i, t});
    }
    out.push_back(SmaChoice{K::EmptyCache, 0, 0});
    if (m_.capture && capture_ == 0) out.push_back(SmaChoice{K::BeginCapture, 0, 0});
    if (capture_ == 1) out.push_back(SmaChoice{K::EndCapture, 0, 0});
  }
  for (std::uint8_t s = 0; s < m_.streams; ++s)
    if (std::any_of(running_.begin(), running_.end(), [&](const Use& u) { return u.stream == s; }))
      out.push_back(SmaChoice{K::EventDone, s, 0});
  return out;
}

void SmaWorld::flag(std::string invariant, std::string message) {
  if (!bad_access(invariant)) bad_.emplace_back(std::move(invariant), std::move(message));
}

std::optional<std::string> SmaWorld::bad_access(std::string_view invariant) const {
  for (const auto& [name, message] : bad_)
    if (name == invariant) return message;
  return std::nullopt;
}

void SmaWorld::settle(const std::vector<SmaAction>& actions) {
  for (const auto& a : actions) {
    if (const auto* e = std::get_if<RecordEvent>(&a)) {
      std::uint64_t bytes = 0;
      for (const auto* list : {&live_, &parked_})
        for (const auto& l : *list)
          if (l.offset == e->block) bytes = l.bytes;
      running_.push_back(Use{e->block, bytes, e->stream, e->event});
      if (m_.mutation == SmaMutation::EarlyEventDone) sma_.event_done(e->event);
    } else if (const auto* m = std::get_if<MapSegment>(&a)) {
      const std::uint64_t page = sma_.config().page_bytes;
      const std::uint64_t bytes = m_.mutation == SmaMutation::MapOnePageShort ? m->bytes - page : m->bytes;
      if (bytes > 0) mapped_[m->offset] = bytes;
    } else if (const auto* u = std::get_if<UnmapSegment>(&a)) {
      mapped_.erase(u->offset);
      if (capture_ == 1)
        flag("no-physical-free-during-capture",
             fmt::format("segment {:#x} ({} B) released while a graph capture is open", u->offset, u->bytes));
      for (const auto& use : running_)
        if (overlaps(u->offset, u->bytes, use.offset, use.bytes))
          flag("no-unmap-in-use", fmt::format("segment {:#x} released while stream {} may still use {:#x}", u->offset,
                                              use.stream, use.offset));
      for (const auto* list : {&live_, &parked_})
        for (const auto& l : *list)
          if (overlaps(u->offset, u->bytes, l.offset, l.bytes))
            flag("no-unmap-in-use", fmt::format("segment {:#x} released under live block {:#x}", u->offset, l.offset));
    }
  }
}

void SmaWorld::apply(const SmaChoice& c) {
  using K = SmaChoice::Kind;
  const StreamId cs = capture_stream();
  switch (c.kind) {
    case K::Malloc: {
      ++ops_used_;
      const StreamId s = c.a;
      auto r = sma_.malloc(kSizes[c.b], s);
      settle(sma_.drain());
      if (!r) break;  // out of memory: a clean error, nothing handed out
      const auto at = r->offset, n = r->bytes;
      for (const auto* list : {&live_, &parked_})
        for (const auto& l : *list)
          if (overlaps(at, n, l.offset, l.bytes))
            flag("live-blocks-disjoint",
                 fmt::format("{:#x} ({} B) handed to stream {} overlaps live block {:#x}", at, n, s, l.offset));
      for (const auto& u : running_)
        if (u.stream != s && overlaps(at, n, u.offset, u.bytes))
          flag("no-reuse-under-foreign-event",
               fmt::format("{:#x} ({} B) handed to stream {} while stream {} may still use {:#x} (event {} pending)",
                           at, n, s, u.stream, u.offset, u.event));
      if (capture_ == 1)
        for (const auto& [fo, fn] : freed_in_capture_)
          if (overlaps(at, n, fo, fn))
            flag("capture-frees-deferred",
                 fmt::format("{:#x} handed out during the capture that freed {:#x}: the graph may still use it", at,
                             fo));
      live_.push_back(Live{at, n, s, {s}});
      break;
    }
    case K::Free: {
      ++ops_used_;
      const Live l = live_[c.a];
      (void)sma_.free(l.offset);
      if (capture_ == 1) {
        parked_.push_back(l);
        freed_in_capture_.emplace_back(l.offset, l.bytes);
      }
      settle(sma_.drain());
      // keep-after-free: the application goes on writing the tensor, so the shadow keeps it live.
      if (m_.mutation != SmaMutation::KeepAfterFree) live_.erase(live_.begin() + c.a);
      break;
    }
    case K::Record:
      ++ops_used_;
      (void)sma_.record_stream(live_[c.a].offset, c.b);
      live_[c.a].used.push_back(c.b);
      break;
    case K::EventDone: {
      // The stream's oldest event: a stream completes its work in order.
      EventId first = 0;
      for (const auto& u : running_)
        if (u.stream == c.a && (first == 0 || u.event < first)) first = u.event;
      std::erase_if(running_, [&](const Use& u) { return u.event == first; });
      if (m_.mutation != SmaMutation::EarlyEventDone) sma_.event_done(first);
      break;
    }
    case K::EmptyCache:
      ++ops_used_;
      sma_.empty_cache();
      settle(sma_.drain());
      break;
    case K::BeginCapture:
      ++ops_used_;
      capture_ = 1;
      if (m_.mutation != SmaMutation::CaptureNotTold) (void)sma_.begin_capture(cs);
      break;
    case K::EndCapture:
      ++ops_used_;
      capture_ = 2;
      if (m_.mutation != SmaMutation::CaptureNotTold) (void)sma_.end_capture(cs);
      settle(sma_.drain());
      parked_.clear();
      freed_in_capture_.clear();
      break;
  }
}

std::string SmaWorld::describe_choice(const SmaChoice& c) const {
  switch (c.kind) {
    case SmaChoice::Kind::Free:
    case SmaChoice::Kind::Record:
      if (c.a < live_.size())
        return fmt::format("{} (block {:#x}, {} B, stream {})", to_string(c), live_[c.a].offset, live_[c.a].bytes,
                           live_[c.a].stream);
      break;
    default: break;
  }
  return to_string(c);
}

std::uint64_t SmaWorld::fingerprint() const {
  StateHasher h;
  for (const auto& [at, seg] : sma_.segments()) {
    h.add(at);
    h.add(seg.bytes);
    h.add(seg.heap);
    h.add(seg.serves);
    h.add(static_cast<std::uint64_t>(seg.pool));
  }
  for (const auto& [at, b] : sma_.blocks()) {
    h.add(at);
    h.add(b.bytes);
    h.add(b.allocated);
    h.add(b.deferred);
    h.add(b.stream);
    for (const auto s : b.used_on) h.add(s);
    for (const auto& p : b.pending) {
      h.add(p.event);
      h.add(p.stream);
    }
  }
  h.add(sma_.capturing());
  for (const auto& [at, bytes] : mapped_) {
    h.add(at);
    h.add(bytes);
  }
  for (const auto* list : {&live_, &parked_}) {
    h.add(static_cast<std::uint64_t>(list->size()));
    for (const auto& l : *list) {
      h.add(l.offset);
      h.add(l.stream);
      for (const auto s : l.used) h.add(s);
    }
  }
  for (const auto& u : running_) {
    h.add(u.offset);
    h.add(u.bytes);
    h.add(u.stream);
    h.add(u.event);
  }
  h.add(static_cast<std::uint64_t>(ops_used_));
  h.add(static_cast<std::uint64_t>(capture_));
  h.add(static_cast<std::uint64_t>(bad_.size()));
  return h.value();
}

}  // namespace railcheck::verify::zerobuf
