#pragma once
// The SMA world: the real allocator (engine/zerobuf/sma_allocator.hpp) on a tiny window (4 KiB
// pages: a one-page small heap and a three-page large heap) under every interleaving, within a
// bound, of mallocs of three sizes on `streams` streams, frees, record_stream, empty_cache, one
// graph capture on the last stream, and the completion of the events the frees recorded (in
// order on each stream, as a GPU completes them).
//
// A shadow of the truth rides along: which ranges each stream may still be using (a live block
// on its stream and record_stream's, then every freed block until its event completes), whether
// a capture is open, what was freed during it. Invariants:
//   no-reuse-under-foreign-event   a block is never handed to a stream while another stream may
//                                  still use it
//   live-blocks-disjoint           a block never overlaps a live (or parked) one
//   no-unmap-in-use                no segment is released while any stream may use its pages
//   no-physical-free-during-capture  no segment is released while a capture is open
//   capture-frees-deferred         a block freed during a capture is not handed out before it ends
//   blocks-tile-segments           blocks tile segments exactly; segments are page-aligned in
//                                  their heaps and wholly mapped by the driver's MapSegment
//
// Mutations are slips of the driver or the engine, one per invariant at least: reporting an event
// done when it is recorded (early-event-done), never telling the allocator about a capture
// (capture-not-told), the application writing a tensor it has freed (keep-after-free: the
// allocator hands its memory to the next request), and an off-by-one page count in the
// allocator's MapSegment action (map-one-page-short).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/zerobuf/sma_allocator.hpp"

namespace railcheck::verify::zerobuf {

enum class SmaMutation : std::uint8_t { None, EarlyEventDone, CaptureNotTold, KeepAfterFree, MapOnePageShort };
std::string_view to_string(SmaMutation m);
std::optional<SmaMutation> parse_sma_mutation(std::string_view s);
std::string_view sma_mutation_names();

struct SmaModel {
  std::string name = "zerobuf-sma";
  std::uint32_t streams = 2;   // 1..3
  std::uint32_t ops = 6;       // mallocs, frees, record_streams, empty_caches and capture edges on a path
  std::uint32_t live_max = 3;  // allocations alive at once
  bool capture = true;         // one capture, on the last stream
  bool borrow = true;          // the allocator's borrow_across_heaps
  SmaMutation mutation = SmaMutation::None;
};
std::string describe(const SmaModel& m);
railcheck::zerobuf::SmaConfig sma_world_config(const SmaModel& m);

struct SmaChoice {
  enum class Kind : std::uint8_t { Malloc, Free, Record, EventDone, EmptyCache, BeginCapture, EndCapture };
  Kind kind = Kind::Malloc;
  std::uint8_t a = 0;  // Malloc: stream; Free/Record: live index; EventDone: stream
  std::uint8_t b = 0;  // Malloc: size class; Record: stream
  bool operator==(const SmaChoice&) const = default;
};
std::string to_string(const SmaChoice& c);
std::optional<SmaChoice> parse_sma_choice(std::string_view s);

class SmaWorld {
 public:
  using ChoiceType = SmaChoice;
  static constexpr std::uint64_t kSizes[3] = {512, 4096, 8192};

  explicit SmaWorld(const SmaModel& m);
  std::vector<SmaChoice> choices() const;
  void apply(const SmaChoice& c);
  std::uint64_t fingerprint() const;
  std::string describe_choice(const SmaChoice& c) const;

  struct Live {
    std::uint64_t offset = 0, bytes = 0;
    railcheck::zerobuf::StreamId stream = 0;
    std::vector<railcheck::zerobuf::StreamId> used;  // its stream, then record_stream's
  };
  struct Use {  // a stream that may still touch a range: until `event` completes
    std::uint64_t offset = 0, bytes = 0;
    railcheck::zerobuf::StreamId stream = 0;
    railcheck::zerobuf::EventId event = 0;
  };
  const railcheck::zerobuf::SmaAllocator& allocator() const { return sma_; }
  // Pages the driver has mapped, from the allocator's MapSegment / UnmapSegment actions:
  // offset -> bytes.
  const std::map<std::uint64_t, std::uint64_t>& mapped() const { return mapped_; }
  // The first bad access seen on this path under `invariant`'s name, if any (sticky).
  std::optional<std::string> bad_access(std::string_view invariant) const;

 private:
  void settle(const std::vector<railcheck::zerobuf::SmaAction>& actions);
  void flag(std::string invariant, std::string message);
  railcheck::zerobuf::StreamId capture_stream() const { return m_.streams - 1; }

  SmaModel m_;
  railcheck::zerobuf::SmaAllocator sma_;
  std::vector<Live> live_, parked_;  // parked: freed during the capture (shadow)
  std::vector<Use> running_;
  std::map<std::uint64_t, std::uint64_t> mapped_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> freed_in_capture_;
  std::uint32_t ops_used_ = 0;
  std::uint8_t capture_ = 0;                              // 0 not begun, 1 open, 2 over
  std::vector<std::pair<std::string, std::string>> bad_;  // (invariant, message), first per invariant
};

}  // namespace railcheck::verify::zerobuf
