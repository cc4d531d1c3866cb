// The zero-buffer checker worlds: the real protocol and allocator hold every invariant over
// their bounds, and each seeded mutation is caught by the invariant meant for it, with a
// counterexample that replays to the same violation.
#include <catch2/catch.hpp>

#include "tests/verify/zerobuf/zerobuf_check_support.hpp"

using namespace railcheck;
using namespace railcheck::verify;
using namespace railcheck::verify::zerobuf;
using railcheck::verify::zerobuf::test::check;
using railcheck::verify::zerobuf::test::replays;
using railcheck::zerobuf::CollKind;

namespace {

ZerobufSpec flags(std::uint32_t ranks, std::uint32_t iterations, std::vector<CollKind> ops, std::uint32_t dead,
                  FlagMutation m = FlagMutation::None, std::vector<std::string> invariants = {}) {
  ZerobufSpec s;
  s.world = WorldKind::Flags;
  s.flags.ranks = ranks;
  s.flags.iterations = iterations;
  s.flags.ops = std::move(ops);
  s.flags.dead_ranks = dead;
  s.flags.mutation = m;
  s.invariants = std::move(invariants);
  s.limits.mode = SearchMode::Bfs;
  s.limits.max_depth = 2000;
  return s;
}

ZerobufSpec sma(SmaMutation m, std::vector<std::string> invariants = {}, std::uint32_t ops = 5) {
  ZerobufSpec s;
  s.world = WorldKind::Sma;
  s.sma.ops = ops;
  s.sma.mutation = m;
  s.invariants = std::move(invariants);
  s.limits.mode = SearchMode::Bfs;
  return s;
}

}  // namespace

TEST_CASE("the flag protocol holds every invariant: 2 ranks x 3 calls of every collective, one may die",
          "[verify][zerobuf]") {
  for (const auto kind : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll,
                          CollKind::Dispatch, CollKind::Combine}) {
    INFO(railcheck::zerobuf::to_string(kind));
    const auto o = check(flags(2, 3, {kind}, 1));
    INFO(o.message.value_or("clean"));
    CHECK_FALSE(o.invariant.has_value());
    CHECK(o.stats.exhausted);
    CHECK(o.stats.distinct > 50);
  }
}

TEST_CASE("the flag protocol holds every invariant: 3 ranks x 2 mixed calls, one may die", "[verify][zerobuf]") {
  auto s = flags(3, 2, {CollKind::AllReduce, CollKind::AllGather}, 1);
  s.flags.in_place = true;
  const auto o = check(s);
  INFO(o.message.value_or("clean"));
  CHECK_FALSE(o.invariant.has_value());
  CHECK(o.stats.exhausted);
}

TEST_CASE("each flag-protocol mutation trips its invariant, and the counterexample replays", "[verify][zerobuf]") {
  struct Case {
    FlagMutation m;
    std::vector<CollKind> ops;
    std::uint32_t dead;
    std::string invariant;
  };
  const std::vector<Case> cases = {
      {FlagMutation::BooleanFlags, {CollKind::AllGather}, 0, "no-flag-aba"},
      {FlagMutation::WriteBeforeReady, {CollKind::AllGather}, 0, "no-overwrite-before-readers-done"},
      {FlagMutation::ReadBeforePosted, {CollKind::ReduceScatter}, 0, "no-read-before-written"},
      {FlagMutation::SkipReadDoneWait, {CollKind::ReduceScatter}, 0, "no-overwrite-before-readers-done"},
      {FlagMutation::FlagBeforeData, {CollKind::AllToAll}, 0, "no-read-before-written"},
      {FlagMutation::NoTimeout, {CollKind::AllReduce}, 1, "no-deadlock"},
      {FlagMutation::TimeoutSkips, {CollKind::AllReduce}, 1, "dead-peer-is-error"},
  };
  for (const auto& c : cases) {
    INFO(to_string(c.m));
    const auto s = flags(2, 2, c.ops, c.dead, c.m, {c.invariant});
    const auto o = check(s);
    REQUIRE(o.invariant.has_value());
    CHECK(*o.invariant == c.invariant);
    replays(s, o);
  }
}

TEST_CASE("the SMA holds every invariant over its bound", "[verify][zerobuf]") {
  const auto o = check(sma(SmaMutation::None));
  INFO(o.message.value_or("clean"));
  CHECK_FALSE(o.invariant.has_value());
  CHECK(o.stats.exhausted);
  CHECK(o.stats.distinct > 1000);
}

TEST_CASE("each SMA driver slip trips its invariant, and the counterexample replays", "[verify][zerobuf]") {
  for (const auto& [m, inv] : std::vector<std::pair<SmaMutation, std::string>>{
           {SmaMutation::EarlyEventDone, "no-reuse-under-foreign-event"},
           {SmaMutation::EarlyEventDone, "no-unmap-in-use"},
           {SmaMutation::CaptureNotTold, "no-physical-free-during-capture"},
           {SmaMutation::CaptureNotTold, "capture-frees-deferred"},
           {SmaMutation::KeepAfterFree, "live-blocks-disjoint"},
           {SmaMutation::MapOnePageShort, "blocks-tile-segments"}}) {
    INFO(to_string(m) << " " << inv);
    const auto s = sma(m, {inv});
    const auto o = check(s);
    REQUIRE(o.invariant.has_value());
    CHECK(*o.invariant == inv);
    replays(s, o);
  }
}

TEST_CASE("model files are read with their ranges checked", "[verify][zerobuf]") {
  auto ok = load_zerobuf_spec_string(
      "world = \"zerobuf-flags\"\nmutation = \"boolean-flags\"\n[flags]\nranks = 3\nops = [\"all-gather\", "
      "\"combine\"]\n",
      "m.toml");
  REQUIRE(ok.ok());
  CHECK(ok->flags.ranks == 3);
  CHECK(ok->flags.ops.size() == 2);
  CHECK(ok->flags.mutation == FlagMutation::BooleanFlags);
  CHECK_THAT(load_zerobuf_spec_string("world = \"zerobuf-flags\"\n[flags]\nranks = 9\n", "m.toml").error().message(),
             Catch::Contains("ranks"));
  CHECK_THAT(load_zerobuf_spec_string("world = \"zerobuf-flags\"\n[flags]\nops = [\"broadcast\"]\n", "m.toml")
                 .error()
                 .message(),
             Catch::Contains("all-gather"));
  CHECK_THAT(
      load_zerobuf_spec_string("world = \"zerobuf-sma\"\ninvariants = [\"no-flag-aba\"]\n", "m.toml").error().message(),
      Catch::Contains("no-reuse-under-foreign-event"));
  CHECK(names_zerobuf_world("world = \"zerobuf-sma\""));
  CHECK_FALSE(names_zerobuf_world("[world]\npaths = 2\n"));
}

TEST_CASE("a zero-buffer model file takes every search mode the other model files take", "[verify][zerobuf]") {
  // The [search] table is read by the same code as the failover models' (it once lost "pdfs").
  auto pdfs = load_zerobuf_spec_string("world = \"zerobuf-sma\"\n[search]\nmode = \"pdfs\"\n", "m.toml");
  REQUIRE(pdfs.ok());
  CHECK(pdfs->limits.mode == SearchMode::ParallelDfs);
  CHECK_THAT(
      load_zerobuf_spec_string("world = \"zerobuf-sma\"\n[search]\nmode = \"sideways\"\n", "m.toml").error().message(),
      Catch::Contains("pdfs"));
}
