#include "verify/zerobuf/sma_invariants.hpp"

#include <fmt/format.h>

namespace railcheck::verify::zerobuf {
namespace {

Invariant<SmaWorld> recorded_sma_violation(std::string name, std::string description) {
  return Invariant<SmaWorld>{
      name, std::move(description),
      [name](const SmaWorld& w, bool) -> std::optional<std::string> { return w.bad_access(name); }};
}

std::optional<std::string> tiling(const SmaWorld& w) {
  const auto& a = w.allocator();
  for (const auto& [at, seg] : a.segments()) {
    if (at % a.config().page_bytes != 0) return fmt::format("segment {:#x} is not page-aligned", at);
    if (a.heap().heap_of(at) != seg.heap || a.heap().heap_of(at + seg.bytes - 1) != seg.heap)
      return fmt::format("segment {:#x} ({} B) is not inside the {} heap", at, seg.bytes,
                         railcheck::zerobuf::to_string(seg.heap));
    std::uint64_t next = at;
    for (auto it = a.blocks().find(at); it != a.blocks().end() && it->second.segment == at; ++it) {
      if (it->first != next) return fmt::format("segment {:#x}: a gap or overlap at {:#x}", at, next);
      next += it->second.bytes;
    }
    if (next != at + seg.bytes) return fmt::format("segment {:#x}: blocks cover {} of {} B", at, next - at, seg.bytes);
    // The driver mapped exactly this segment's pages (MapSegment), no fewer.
    const auto m = w.mapped().find(at);
    const std::uint64_t mapped = m == w.mapped().end() ? 0 : m->second;
    if (mapped != seg.bytes)
      return fmt::format("segment {:#x} of {} B has {} B mapped: blocks past {:#x} lie on unmapped pages", at,
                         seg.bytes, mapped, at + mapped);
  }
  for (const auto& [at, b] : a.blocks()) {
    if (!a.segments().contains(b.segment)) return fmt::format("block {:#x} names no segment", at);
  }
  return std::nullopt;
}

}  // namespace

const std::vector<Invariant<SmaWorld>>& sma_invariants() {
  static const std::vector<Invariant<SmaWorld>> all = {
      recorded_sma_violation("no-reuse-under-foreign-event",
                             "a block is never handed to a stream while another stream may still use it"),
      recorded_sma_violation("live-blocks-disjoint", "a block never overlaps a live or parked one"),
      recorded_sma_violation("no-unmap-in-use", "no segment is released while any stream may still use its pages"),
      recorded_sma_violation("no-physical-free-during-capture", "no segment is released while a graph capture is open"),
      recorded_sma_violation("capture-frees-deferred",
                             "a block freed during a capture is not handed out before the capture ends"),
      {"blocks-tile-segments",
       "blocks tile every segment exactly; segments are page-aligned inside their heap and wholly mapped",
       [](const SmaWorld& w, bool) { return tiling(w); }},
  };
  return all;
}

}  // namespace railcheck::verify::zerobuf
