// The fast-path worlds (verify/zerobuf/ll_world.hpp, direct_world.hpp): the LL and direct
// protocols of engine/zerobuf/fast_path.hpp hold every invariant over their bounds, each seeded
// mutation is caught by the invariant meant for it with a counterexample that replays to the
// same violation, and the LL epoch's wrap is pinned as found.
#include <catch2/catch.hpp>

#include "tests/verify/zerobuf/zerobuf_check_support.hpp"

using namespace railcheck;
using namespace railcheck::verify;
using namespace railcheck::verify::zerobuf;
using railcheck::verify::zerobuf::test::check;
using railcheck::verify::zerobuf::test::replays;

namespace {

ZerobufSpec ll(std::uint32_t ranks, std::uint32_t calls, std::vector<FastOp> ops, std::uint32_t piece_bytes,
               std::uint32_t dead, LlMutation m = LlMutation::None, std::vector<std::string> invariants = {}) {
  ZerobufSpec s;
  s.world = WorldKind::Ll;
  s.ll.ranks = ranks;
  s.ll.calls = calls;
  s.ll.ops = std::move(ops);
  s.ll.piece_bytes = {piece_bytes};
  s.ll.dead_ranks = dead;
  s.ll.mutation = m;
  s.invariants = std::move(invariants);
  s.limits.mode = SearchMode::Bfs;
  s.limits.max_depth = 2000;
  return s;
}

ZerobufSpec direct(std::uint32_t ranks, std::uint32_t calls, std::vector<FastOp> ops, std::uint32_t units,
                   std::uint32_t dead, DirectMutation m = DirectMutation::None,
                   std::vector<std::string> invariants = {}) {
  ZerobufSpec s;
  s.world = WorldKind::Direct;
  s.direct.ranks = ranks;
  s.direct.calls = calls;
  s.direct.ops = std::move(ops);
  s.direct.units = units;
  s.direct.dead_ranks = dead;
  s.direct.mutation = m;
  s.invariants = std::move(invariants);
  s.limits.mode = SearchMode::Bfs;
  s.limits.max_depth = 2000;
  return s;
}

const std::vector<FastOp> kEveryOp = {FastOp::AllGather, FastOp::AllReduce, FastOp::ReduceScatter, FastOp::AllToAll};

void clean(const ZerobufSpec& s, std::uint64_t at_least) {
  const auto o = check(s);
  INFO(describe(s) << ": " << o.message.value_or("clean"));
  CHECK_FALSE(o.invariant.has_value());
  CHECK(o.stats.exhausted);
  CHECK(o.stats.distinct > at_least);
}

// Found under `invariant`, and the trace, written and read back, replays to it.
void caught(const ZerobufSpec& s, const std::string& invariant) {
  INFO(describe(s) << " -> " << invariant);
  const auto o = check(s);
  REQUIRE(o.invariant.has_value());
  CHECK(*o.invariant == invariant);
  replays(s, o);
}

}  // namespace

TEST_CASE("the LL protocol holds every invariant: 2 ranks x every collective in 2-line pieces and one may die",
          "[verify][zerobuf][ll]") {
  auto s = ll(2, 4, kEveryOp, 12, 1);
  clean(s, 1000);
  s.ll.in_place = true;
  clean(s, 1000);
}

TEST_CASE("the LL protocol holds every invariant: pieces of 1 to 3 lines in turn share slots sized for the largest",
          "[verify][zerobuf][ll]") {
  auto s = ll(2, 4, kEveryOp, 20, 1);
  s.ll.piece_bytes = {20, 4, 12};
  clean(s, 10000);
}

TEST_CASE("the LL protocol holds every invariant: 3 ranks x 3 mixed one-line calls and one may die",
          "[verify][zerobuf][ll]") {
  auto s = ll(3, 3, {FastOp::AllReduce, FastOp::AllToAll, FastOp::ReduceScatter}, 4, 1);
  s.ll.in_place = true;
  clean(s, 10000);
}

TEST_CASE("each LL mutation trips its invariant and the counterexample replays", "[verify][zerobuf][ll]") {
  caught(ll(2, 3, {FastOp::AllGather}, 8, 0, LlMutation::SingleBuffer, {"no-deadlock"}), "no-deadlock");
  caught(ll(2, 2, {FastOp::AllGather}, 8, 0, LlMutation::OneFlagPerLine, {"ll-accepts-call-data"}),
         "ll-accepts-call-data");
  caught(ll(2, 2, {FastOp::AllReduce}, 8, 0, LlMutation::GraphReplaysEpoch, {"ll-accepts-call-data"}),
         "ll-accepts-call-data");
  auto in_place = ll(2, 1, {FastOp::AllReduce}, 8, 0, LlMutation::InPlaceSumBeforeSend, {"ll-accepts-call-data"});
  in_place.ll.in_place = true;
  caught(in_place, "ll-accepts-call-data");
  auto moving_slots = ll(2, 2, {FastOp::AllGather}, 8, 0, LlMutation::SlotLinesPerCall, {"no-deadlock"});
  moving_slots.ll.piece_bytes = {8, 24};
  caught(moving_slots, "no-deadlock");
  // The torn line also reaches the application as a wrong result.
  caught(ll(2, 2, {FastOp::ReduceScatter}, 8, 0, LlMutation::OneFlagPerLine, {"ll-output-matches-spec"}),
         "ll-output-matches-spec");
}

TEST_CASE("a dead LL peer becomes a timeout error on the others and never a wrong result", "[verify][zerobuf][ll]") {
  const auto o = check(ll(3, 2, {FastOp::AllGather, FastOp::AllReduce}, 4, 1));
  INFO(o.message.value_or("clean"));
  CHECK_FALSE(o.invariant.has_value());
  CHECK(o.stats.end_states > 10);  // the ends where a rank died and the others failed
}

// fast_path.hpp's ll_next_epoch used to wrap 0xFFFFFFFF to 1: two odd epochs in a row shared
// parity 1, and a fast sender overwrote a line its peer had not read (found by this world, a hang
// after 2^32 - 1 calls). The wrap now goes to 2, and the same bound is clean.
TEST_CASE("the LL epoch counter's wrap keeps the parity alternating and the calls across it are clean",
          "[verify][zerobuf][ll]") {
  CHECK(railcheck::zerobuf::ll_parity(0xFFFFFFFFU) !=
        railcheck::zerobuf::ll_parity(railcheck::zerobuf::ll_next_epoch(0xFFFFFFFFU)));
  auto s = ll(2, 4, {FastOp::AllGather}, 4, 0);
  s.ll.first_epoch = 0xFFFFFFFEU;
  clean(s, 20);
  s.ll.calls = 2;  // up to 0xFFFFFFFF, before the wrap
  clean(s, 20);
}

// The LL two-shot all-reduce (fast_path.hpp, issue 43): two phases a call, each its own epoch,
// mixed on one counter with one-shot calls.
namespace {
ZerobufSpec two_shot(std::uint32_t ranks, std::uint32_t calls, std::vector<FastOp> ops, std::uint32_t piece_bytes,
                     std::uint32_t dead, LlMutation m = LlMutation::None, std::vector<std::string> invariants = {}) {
  auto s = ll(ranks, calls, std::move(ops), piece_bytes, dead, m, std::move(invariants));
  s.ll.two_shot = true;
  return s;
}
}  // namespace

TEST_CASE("the LL two-shot holds every invariant: 2 ranks in place between one-shot calls and one may die",
          "[verify][zerobuf][ll][two-shot]") {
  auto s = two_shot(2, 3, {FastOp::AllReduce, FastOp::AllGather}, 16, 1);
  s.ll.in_place = true;
  clean(s, 1000);
  s.ll.in_place = false;
  s.ll.piece_bytes = {20, 8};  // 3 lines: parts of 2 and 1 lines, the last a half line
  s.ll.ops = {FastOp::AllReduce, FastOp::AllToAll};
  clean(s, 1000);
}

TEST_CASE("the LL two-shot holds every invariant: 3 ranks, a part each", "[verify][zerobuf][ll][two-shot]") {
  auto s = two_shot(3, 2, {FastOp::AllReduce}, 24, 0);
  s.ll.in_place = true;
  clean(s, 1000);
}

TEST_CASE("the LL two-shot needs its second epoch, and its counterexample replays", "[verify][zerobuf][ll][two-shot]") {
  caught(two_shot(2, 1, {FastOp::AllReduce}, 16, 0, LlMutation::TwoShotSameEpoch, {"ll-accepts-call-data"}),
         "ll-accepts-call-data");
  caught(two_shot(2, 2, {FastOp::AllReduce}, 16, 0, LlMutation::GraphReplaysEpoch, {"ll-accepts-call-data"}),
         "ll-accepts-call-data");
}

TEST_CASE("a dead peer in the LL two-shot becomes a timeout error", "[verify][zerobuf][ll][two-shot]") {
  const auto o = check(two_shot(2, 1, {FastOp::AllReduce}, 16, 1));
  INFO(o.message.value_or("clean"));
  CHECK_FALSE(o.invariant.has_value());
  CHECK(o.stats.end_states > 5);
}

TEST_CASE("the direct protocol holds every invariant: 2 ranks x every collective over 2 blocks and one may die",
          "[verify][zerobuf][direct]") {
  auto s = direct(2, 4, kEveryOp, 3, 1);
  s.direct.blocks = 2;
  clean(s, 1000);
  s.direct.in_place = true;
  s.direct.buffers = 1;
  clean(s, 1000);
}

TEST_CASE("the direct protocol holds every invariant: 3 ranks x the in-place two-shot and all-to-all",
          "[verify][zerobuf][direct]") {
  auto s = direct(3, 3, {FastOp::AllReduce, FastOp::AllToAll, FastOp::AllReduce}, 3, 1);
  s.direct.in_place = true;
  clean(s, 1000);
}

TEST_CASE("each direct mutation trips its invariant and the counterexample replays", "[verify][zerobuf][direct]") {
  caught(direct(2, 2, {FastOp::AllGather}, 2, 0, DirectMutation::NoEndBarrier, {"no-read-before-written"}),
         "no-read-before-written");
  // With one buffer set the early return also lets the application overwrite an input a peer
  // still reads.
  auto reuse =
      direct(2, 2, {FastOp::AllReduce}, 2, 0, DirectMutation::NoEndBarrier, {"no-overwrite-before-readers-done"});
  reuse.direct.buffers = 1;
  caught(reuse, "no-overwrite-before-readers-done");
  // ... and consume a sum a peer has not stored yet.
  caught(direct(2, 2, {FastOp::AllReduce}, 2, 0, DirectMutation::NoEndBarrier, {"direct-results-match-spec"}),
         "direct-results-match-spec");
  caught(direct(2, 2, {FastOp::AllReduce}, 2, 0, DirectMutation::StartWithoutOffsets, {"no-read-before-written"}),
         "no-read-before-written");
  caught(direct(2, 1, {FastOp::AllReduce}, 2, 0, DirectMutation::SharedSlotNoGe, {"no-deadlock"}), "no-deadlock");
}

TEST_CASE("fast-path model files are read with their ranges checked", "[verify][zerobuf]") {
  auto ok = load_zerobuf_spec_string(
      "world = \"zerobuf-ll\"\nmutation = \"single-buffer\"\n[ll]\nranks = 3\npiece_bytes = 20\nops = "
      "[\"all-to-all\"]\nfirst_epoch = 4294967295\n",
      "m.toml");
  REQUIRE(ok.ok());
  CHECK(ok->ll.ranks == 3);
  CHECK(ok->ll.piece_bytes == std::vector<std::uint32_t>{20});
  CHECK(ok->ll.first_epoch == 0xFFFFFFFFU);
  CHECK(ok->ll.mutation == LlMutation::SingleBuffer);
  auto d = load_zerobuf_spec_string("world = \"zerobuf-direct\"\nmutation = \"no-end-barrier\"\n[direct]\nblocks = 2\n",
                                    "m.toml");
  REQUIRE(d.ok());
  CHECK(d->direct.blocks == 2);
  CHECK(d->direct.mutation == DirectMutation::NoEndBarrier);
  const auto error = [](const char* text) { return load_zerobuf_spec_string(text, "m.toml").error().message(); };
  CHECK_THAT(error("world = \"zerobuf-ll\"\n[ll]\npiece_bytes = 6\n"), Catch::Contains("multiples of 4"));
  CHECK_THAT(error("world = \"zerobuf-ll\"\n[ll]\nranks = 5\n"), Catch::Contains("ranks"));
  CHECK_THAT(error("world = \"zerobuf-ll\"\n[ll]\nops = [\"dispatch\"]\n"), Catch::Contains("all-to-all"));
  CHECK_THAT(error("world = \"zerobuf-direct\"\nmutation = \"single-buffer\"\n"), Catch::Contains("no-end-barrier"));
  CHECK_THAT(error("world = \"zerobuf-direct\"\n[direct]\npiece_bytes = 8\n"), Catch::Contains("units"));
  CHECK_THAT(error("world = \"zerobuf-fast\"\n"), Catch::Contains("zerobuf-direct"));
  auto two = load_zerobuf_spec_string(
      "world = \"zerobuf-ll\"\nmutation = \"two-shot-same-epoch\"\n[ll]\nranks = 4\npiece_bytes = 32\nops = "
      "[\"all-reduce\"]\ntwo_shot = true\n",
      "m.toml");
  REQUIRE(two.ok());
  CHECK(two->ll.two_shot);
  CHECK(two->ll.mutation == LlMutation::TwoShotSameEpoch);
  // A two-shot all-reduce needs a line per rank; other ops do not.
  CHECK_THAT(error("world = \"zerobuf-ll\"\n[ll]\nranks = 3\npiece_bytes = 16\nops = [\"all-reduce\"]\ntwo_shot = "
                   "true\n"),
             Catch::Contains("at least 24 bytes"));
  CHECK(load_zerobuf_spec_string(
            "world = \"zerobuf-ll\"\n[ll]\nranks = 3\npiece_bytes = 16\nops = [\"all-gather\"]\ntwo_shot = true\n",
            "m.toml")
            .ok());
}
