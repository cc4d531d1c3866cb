// The GPU window layout: the SMA's layout fitted to the VMM granularity with the flag area at
// offset 0, and the check that collective buffers lie inside the window.
#include "backends/hw/cuda/zerobuf/window_layout.hpp"

#include <catch2/catch.hpp>

#include "backends/hw/cuda/zerobuf/window_handle.hpp"
#include "engine/zerobuf/fast_path.hpp"
#include "engine/zerobuf/flag_step.hpp"

using namespace railcheck::hw::zerobuf;
using railcheck::zerobuf::SmaConfig;

constexpr std::uint64_t MiB = 1ULL << 20;

TEST_CASE("the window is the SMA's front and heaps in whole pages, the flag area first", "[zerobuf][layout]") {
  SmaConfig c;
  c.small_heap_bytes = 2 * MiB;
  c.large_heap_bytes = 1536 * MiB;
  auto w = plan_window(c, 2 * MiB, 2);
  REQUIRE(w.ok());
  CHECK(w->flag_area_bytes == railcheck::zerobuf::flag_area_bytes(2));
  CHECK(w->flag_area_bytes == 4 * 2 * 16);
  CHECK(w->window_bytes == (2 + 2 + 1536) * MiB);  // front rounded to a page, then the heaps
  CHECK(w->window_bytes % (2 * MiB) == 0);
}

TEST_CASE("window settings the driver or the flags cannot take are errors", "[zerobuf][layout]") {
  SmaConfig c;
  SECTION("page smaller than the granularity") {
    c.page_bytes = 64 << 10;
    c.small_request_max = 64 << 10;
    auto w = plan_window(c, 2 * MiB, 2);
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().what.find("not a multiple of the CUDA VMM granularity") != std::string::npos);
  }
  SECTION("a front too small for the flags of 8 ranks") {
    c.front_bytes = 256;
    auto w = plan_window(c, 2 * MiB, 8);
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().what.find("needs 512 B, the front has 256 B") != std::string::npos);
  }
  SECTION("more ranks than the kernel's peer table") { CHECK_FALSE(plan_window(c, 2 * MiB, kMaxRanks + 1).ok()); }
  SECTION("SMA settings out of range") {
    c.page_bytes = 3 * MiB;
    CHECK(plan_window(c, MiB, 2).error().what.find("page_bytes") != std::string::npos);
  }
}

TEST_CASE("collective buffers must lie wholly inside the window", "[zerobuf][layout]") {
  const std::uintptr_t base = 0x7f0000000000;
  const std::uint64_t size = 64 * MiB;
  CHECK(window_offset(base, size, base, size, "input").value() == 0);
  CHECK(window_offset(base, size, base + 4096, 8, "input").value() == 4096);
  CHECK(window_offset(base, size, base + size - 8, 8, "output").value() == size - 8);
  auto below = window_offset(base, size, base - 4, 8, "input");
  REQUIRE_FALSE(below.ok());
  CHECK(below.error().what.find("input") != std::string::npos);
  CHECK(below.error().hint.find("zerobuf pool") != std::string::npos);
  CHECK_FALSE(window_offset(base, size, base + size - 4, 8, "output").ok());  // runs past the end
  CHECK_FALSE(window_offset(base, size, base + size + 4096, 0, "output").ok());
  CHECK_FALSE(window_offset(base, size, base + 8, ~0ULL, "output").ok());  // no overflow wrap
}

TEST_CASE("the fast paths' areas follow the flag area in the front and grow it", "[zerobuf][layout]") {
  SmaConfig c;
  c.small_heap_bytes = 2 * MiB;
  c.large_heap_bytes = 64 * MiB;
  auto plain = plan_window(c, 2 * MiB, 4);
  auto w = plan_window(c, 2 * MiB, 4, 1 * MiB);
  REQUIRE(plain.ok());
  REQUIRE(w.ok());
  CHECK(plain->front_used_bytes == plain->flag_area_bytes);
  CHECK(plain->ll_slot_lines == 0);
  // Flag area, barrier area, LL area, in that order, none overlapping, each on its own 4 KiB.
  CHECK(w->barrier_area_offset >= w->flag_area_bytes);
  CHECK(w->ll_area_offset >= w->barrier_area_offset + railcheck::zerobuf::barrier_area_bytes(4));
  CHECK(w->barrier_area_offset % 4096 == 0);
  CHECK(w->ll_area_offset % 4096 == 0);
  CHECK(w->ll_slot_lines == MiB / 8);  // 8 data bytes a line
  // Two parities x four senders x 1 MiB of data at half the line: 16 MiB of LL area.
  CHECK(w->front_used_bytes == w->ll_area_offset + 16 * MiB);
  CHECK(w->sma.front_bytes == w->front_used_bytes);
  CHECK(w->window_bytes == plain->window_bytes + 16 * MiB);  // the front: one page -> nine
  CHECK(w->window_bytes % (2 * MiB) == 0);
  SECTION("an LL limit that is not whole 4-byte words") { CHECK_FALSE(plan_window(c, 2 * MiB, 4, 6).ok()); }
}
