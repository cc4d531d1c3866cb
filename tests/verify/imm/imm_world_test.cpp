// The ImmCounter world as an explorer world (verify/imm/imm_world.hpp): the same schedules as
// check_every_order, clean under resync, a double count under the seed's naive rule, and a
// model file that reads back from the text it writes.
#include "verify/imm/imm_world.hpp"

#include <catch2/catch.hpp>

#include "verify/imm/arrival_enumerator.hpp"

using namespace railcheck;
using namespace railcheck::imm;

namespace {

verify::SearchResult<ImmWorld> explore(const ImmModel& m, bool with_invariants) {
  const std::span<const verify::Invariant<ImmWorld>> none;
  return verify::explore<ImmWorld>(ImmWorld(m), with_invariants ? imm_invariants() : none, verify::SearchLimits{});
}

}  // namespace

TEST_CASE("every schedule of check_every_order is one end state of the imm world") {
  for (const auto& [writes, policy, failover] :
       {std::tuple{3U, ReplayPolicy::Resync, true}, std::tuple{2U, ReplayPolicy::Naive, true},
        std::tuple{4U, ReplayPolicy::Probe, false}}) {
    INFO(writes << " writes, " << to_string(policy) << (failover ? ", failover" : ""));
    const auto r = explore(ImmModel{"m", writes, policy, failover}, false);
    const auto all = check_every_order({writes, policy, failover});
    REQUIRE(all.ok());
    CHECK(r.stats.exhausted);
    CHECK(r.stats.end_states == all->schedules);
  }
}

TEST_CASE("resync exhausts the imm world clean, naive double-counts an ACK-lost write") {
  const auto clean = explore(ImmModel{"m", 3, ReplayPolicy::Resync, true}, true);
  CHECK(clean.stats.exhausted);
  CHECK_FALSE(clean.violation.has_value());
  const auto bad = explore(ImmModel{"m", 3, ReplayPolicy::Naive, true}, true);
  REQUIRE(bad.violation.has_value());
  INFO(bad.violation->message);
  CHECK_THAT(bad.violation->message, Catch::Contains("counted at most 2 time(s)"));
  bool replayed = false;
  for (const auto& s : bad.violation->steps)
    replayed = replayed || to_string(s).find("replayed copy") != std::string::npos;
  CHECK(replayed);
}

TEST_CASE("an imm model file reads back from the text it writes, bad keys name file and line") {
  auto spec = load_imm_model("world = \"imm\"\npolicy = \"probe\"\n[bounds]\nwrites = 2\nfailover = false\n", "i.toml");
  REQUIRE(spec.ok());
  auto again = load_imm_model(to_model_toml(spec->model), "again.toml");
  REQUIRE(again.ok());
  CHECK(again->model.name == "i");
  CHECK(again->model.policy == ReplayPolicy::Probe);
  CHECK(again->model.writes == 2);
  CHECK_FALSE(again->model.failover);
  auto bad = load_imm_model("world = \"imm\"\npolicy = \"hope\"\n", "b.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message(), Catch::Contains("b.toml:2: policy"));
}
