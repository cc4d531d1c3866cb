// The fast paths' shared rules (engine/zerobuf/fast_path.hpp): which piece goes where, the LL
// area's slots and epochs, the direct path's all-reduce parts, and which path a call takes.
#include "engine/zerobuf/fast_path.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <vector>

using namespace railcheck::zerobuf;

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

TEST_CASE("every op sends each peer its piece and receives each peer's piece where the op puts it", "[zerobuf][fast]") {
  // 3 ranks, 64 bytes as CollCall counts them.
  CHECK(piece_to(FastOp::AllGather, 64, 2).offset == 0);
  CHECK(piece_to(FastOp::AllReduce, 64, 2).bytes == 64);
  CHECK(piece_to(FastOp::ReduceScatter, 64, 2).offset == 128);  // block 2 of the 3-block input
  CHECK(piece_to(FastOp::AllToAll, 64, 1).offset == 64);
  CHECK(piece_at(FastOp::AllGather, 64, 2).offset == 128);  // rank 2's part of the output
  CHECK(piece_at(FastOp::AllToAll, 64, 1).offset == 64);
  CHECK(piece_at(FastOp::ReduceScatter, 64, 2).offset == 0);  // summed into the one output block
  CHECK(piece_at(FastOp::AllReduce, 64, 1).offset == 0);
  CHECK(fast_reduces(FastOp::AllReduce));
  CHECK(fast_reduces(FastOp::ReduceScatter));
  CHECK_FALSE(fast_reduces(FastOp::AllGather));
  CHECK_FALSE(fast_reduces(FastOp::AllToAll));
}

TEST_CASE("the LL area holds one slot per parity and sender and no two overlap", "[zerobuf][fast]") {
  const std::uint32_t n = 4;
  const std::uint64_t lines = ll_lines(1000);  // 125 lines of 8 data bytes
  CHECK(lines == 125);
  CHECK(ll_lines(4) == 1);
  CHECK(ll_lines(12) == 2);
  std::set<std::uint64_t> starts;
  for (std::uint32_t parity = 0; parity < 2; ++parity)
    for (std::uint32_t s = 0; s < n; ++s) {
      const std::uint64_t at = ll_slot_offset(parity, s, n, lines);
      CHECK(at % sizeof(LlLine) == 0);
      CHECK(at + lines * sizeof(LlLine) <= ll_area_bytes(n, lines));
      starts.insert(at);
    }
  REQUIRE(starts.size() == 2 * n);
  for (auto it = starts.begin(); std::next(it) != starts.end(); ++it) CHECK(*std::next(it) - *it == lines * 16);
}

TEST_CASE("LL epochs alternate parity and never come back to 0 or repeat in a slot two calls apart",
          "[zerobuf][fast]") {
  CHECK(ll_next_epoch(0) == 1);
  CHECK(ll_next_epoch(1) == 2);
  CHECK(ll_next_epoch(0xFFFFFFFFU) == 2);  // never 0: a cleared line never looks written
  // The parity alternates across the wrap too (zerobuf_ll_epoch_wrap.toml).
  for (std::uint32_t e : {1U, 2U, 0xFFFFFFFEU, 0xFFFFFFFFU}) CHECK(ll_parity(ll_next_epoch(e)) != ll_parity(e));
  CHECK(ll_parity(1) != ll_parity(2));
  const LlLine half_written{7, 5, 8, 4};  // second half still from the call before
  CHECK_FALSE(ll_line_ready(half_written, 5));
  CHECK(ll_line_ready(LlLine{7, 5, 8, 5}, 5));
  CHECK_FALSE(ll_line_ready(LlLine{0, 0, 0, 0}, 1));
}

TEST_CASE("the direct all-reduce parts tile the buffer in 16-byte units", "[zerobuf][fast]") {
  for (std::uint32_t n : {2U, 3U, 4U, 8U})
    for (std::uint64_t bytes : {16ULL, 48ULL, 4096ULL, 1000ULL * 16, 256ULL * MiB}) {
      std::uint64_t next = 0;
      for (std::uint32_t r = 0; r < n; ++r) {
        const Span p = direct_part(bytes, r, n);
        INFO("n " << n << " bytes " << bytes << " rank " << r);
        CHECK(p.offset == next);
        CHECK(p.offset % 16 == 0);
        CHECK(p.bytes % 16 == 0);
        next = p.offset + p.bytes;
      }
      CHECK(next == bytes);
    }
  // Fewer units than ranks: some parts are empty, still no overlap.
  CHECK(direct_part(16, 0, 4).bytes == 16);
  CHECK(direct_part(16, 3, 4).bytes == 0);
}

TEST_CASE("the direct barrier epochs of consecutive calls only grow", "[zerobuf][fast]") {
  for (std::uint64_t c = 0; c < 5; ++c) {
    CHECK(direct_start_epoch(c) < direct_end_epoch(c));
    CHECK(direct_end_epoch(c) < direct_start_epoch(c + 1));
  }
  CHECK(barrier_slot_offset(1, 0, 4) == 4 * sizeof(BarrierSlot));
  CHECK(barrier_slot_offset(kMaxDirectBlocks - 1, 3, 4) + sizeof(BarrierSlot) == barrier_area_bytes(4));
}

TEST_CASE("a call takes LL while a rank pushes at most the limit and direct beyond", "[zerobuf][fast]") {
  const FastPathLimits lim;  // 1 MiB pushed
  SECTION("two ranks: the piece itself") {
    CHECK(choose_path(FastOp::AllReduce, 8, 2, true, lim) == FastPath::Ll);
    CHECK(choose_path(FastOp::AllReduce, MiB, 2, true, lim) == FastPath::Ll);
    CHECK(choose_path(FastOp::AllReduce, 2 * MiB, 2, true, lim) == FastPath::Direct);
  }
  SECTION("eight ranks: seven pieces pushed") {
    CHECK(choose_path(FastOp::AllGather, 128 * KiB, 8, true, lim) == FastPath::Ll);
    CHECK(choose_path(FastOp::AllGather, 256 * KiB, 8, true, lim) == FastPath::Direct);
    CHECK(ll_max_piece(lim.ll_max_send_bytes, 8) % 4 == 0);
  }
  SECTION("sizes and alignments a path cannot take") {
    CHECK(choose_path(FastOp::AllGather, 6, 2, true, lim) == FastPath::Program);         // not 4-byte words
    CHECK(choose_path(FastOp::AllGather, 4 * MiB, 2, false, lim) == FastPath::Program);  // unaligned, too big
    CHECK(choose_path(FastOp::AllGather, 4 * MiB + 4, 2, true, lim) == FastPath::Program);
    CHECK(choose_path(FastOp::AllGather, 0, 2, true, lim) == FastPath::Program);
  }
  SECTION("pinned for measuring") {
    FastPathLimits pin = lim;
    pin.force = true;
    pin.forced = FastPath::Direct;
    CHECK(choose_path(FastOp::AllReduce, 64, 2, true, pin) == FastPath::Direct);
    CHECK(choose_path(FastOp::AllReduce, 64, 2, false, pin) == FastPath::Program);
    pin.forced = FastPath::Ll;
    CHECK(choose_path(FastOp::AllReduce, 4 * MiB, 2, true, pin) == FastPath::Program);
    pin.forced = FastPath::Program;
    CHECK(choose_path(FastOp::AllReduce, 64, 2, true, pin) == FastPath::Program);
  }
  SECTION("switched off") {
    FastPathLimits off = lim;
    off.enabled = false;
    CHECK(choose_path(FastOp::AllReduce, 64, 2, true, off) == FastPath::Program);
  }
}

TEST_CASE("the LL two-shot cuts an all-reduce into one part of whole lines per rank", "[zerobuf][fast]") {
  for (const std::uint32_t n : {2U, 3U, 4U, 8U})
    for (const std::uint64_t bytes : {std::uint64_t{8} * n, std::uint64_t{100}, std::uint64_t{1028}, 2 * MiB + 4}) {
      if (!ll_two_shot_ok(bytes, n)) continue;
      std::uint64_t next = 0;
      for (std::uint32_t r = 0; r < n; ++r) {
        const Span p = ll_two_shot_part(bytes, r, n);
        INFO(n << " ranks, " << bytes << " B, part " << r);
        CHECK(p.offset == next);  // parts tile the buffer in rank order
        CHECK(p.offset % 8 == 0);
        CHECK(p.bytes > 0);
        CHECK(ll_lines(p.bytes) <= ll_two_shot_slot_lines(bytes, n));
        if (r + 1 < n) CHECK(p.bytes % 8 == 0);  // only the last part may end in half a line
        next = p.offset + p.bytes;
      }
      CHECK(next == bytes);
    }
  CHECK_FALSE(ll_two_shot_ok(8, 2));  // one line: rank 1 would own nothing and send nothing
  CHECK(ll_two_shot_ok(16, 2));
  CHECK_FALSE(ll_two_shot_ok(18, 2));
  CHECK(ll_two_shot_send_bytes(MiB, 4) == 2 * (MiB - MiB / 4));  // 2 x (n - 1) / n of the buffer
}

TEST_CASE("the LL two-shot's phases take consecutive epochs that keep the parity alternating", "[zerobuf][fast]") {
  for (const std::uint32_t counter : {0U, 1U, 2U, 0xFFFFFFFEU, 0xFFFFFFFFU}) {
    const std::uint32_t e1 = ll_two_shot_epoch1(counter), e2 = ll_two_shot_epoch2(counter);
    INFO(counter);
    CHECK(e1 != 0);
    CHECK(e2 != 0);
    CHECK(ll_parity(e1) != ll_parity(counter));
    CHECK(ll_parity(e2) != ll_parity(e1));
  }
}

TEST_CASE("the LL two-shot takes the mid range of an all-reduce only where it is switched on", "[zerobuf][fast]") {
  FastPathLimits lim;  // off by default: no kernel runs it yet
  CHECK(choose_path(FastOp::AllReduce, 512 * KiB, 4, true, lim) == FastPath::Direct);
  lim.ll_two_shot_max_bytes = 2 * MiB;
  CHECK(choose_path(FastOp::AllReduce, 256 * KiB, 4, true, lim) == FastPath::Ll);  // one-shot LL still first
  CHECK(choose_path(FastOp::AllReduce, 512 * KiB, 4, true, lim) == FastPath::LlTwoShot);
  CHECK(choose_path(FastOp::AllReduce, 2 * MiB, 4, true, lim) == FastPath::LlTwoShot);
  CHECK(choose_path(FastOp::AllReduce, 4 * MiB, 4, true, lim) == FastPath::Direct);
  CHECK(choose_path(FastOp::AllGather, 512 * KiB, 4, true, lim) == FastPath::Direct);    // all-reduce only
  CHECK(choose_path(FastOp::AllReduce, 2 * MiB, 2, true, lim) == FastPath::Direct);      // 2 ranks: below the minimum
  CHECK(choose_path(FastOp::AllReduce, MiB + 4, 4, false, lim) == FastPath::LlTwoShot);  // 4-byte words will do
  lim.force = true;
  lim.forced = FastPath::LlTwoShot;
  CHECK(choose_path(FastOp::AllReduce, 64, 4, true, lim) == FastPath::LlTwoShot);
  CHECK(choose_path(FastOp::AllReduce, 16, 4, true, lim) == FastPath::Program);  // 2 lines for 4 ranks
}
