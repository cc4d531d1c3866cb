// The plan worlds as explorer worlds (verify/plan/channel_search.hpp, lifecycle_world.hpp) and
// their model files (plan_models.hpp): the explorer visits the same communicators as the
// whole-bound enumerator, finds PassSm's divergence, and a model writes itself back unchanged.
#include "verify/plan/channel_search.hpp"

#include <catch2/catch.hpp>

#include "verify/explorer.hpp"
#include "verify/plan/plan_models.hpp"

namespace railcheck::plan {
namespace {

verify::SearchResult<ChannelAgreementWorld> explore_all(const ChannelModel& m, bool with_invariants) {
  auto root = ChannelAgreementWorld::make(m);
  REQUIRE(root.ok());
  const std::span<const verify::Invariant<ChannelAgreementWorld>> none;
  return verify::explore<ChannelAgreementWorld>(root.value(), with_invariants ? channel_invariants() : none,
                                                verify::SearchLimits{});
}

TEST_CASE("every communicator of the bound is one end state of the explorer", "[verify][plan]") {
  for (const char* policy : {"nccl", "passsm"}) {
    INFO(policy);
    ChannelModel m;
    m.policy = policy;
    const auto r = explore_all(m, false);
    CHECK(r.stats.exhausted);
    CHECK(r.stats.end_states == check_channel_world(policy_by_name(policy).value(), m.bound).worlds);
  }
}

TEST_CASE("the explorer finds PassSm's divergence and nccl clean over the same bound", "[verify][plan]") {
  ChannelModel m;
  m.policy = "passsm";
  const auto bad = explore_all(m, true);
  REQUIRE(bad.violation.has_value());
  CHECK(bad.violation->invariant == "channel-agreement");
  CHECK(to_string(bad.violation->steps.front()) == "ranks 2");
  m.policy = "nccl";
  const auto clean = explore_all(m, true);
  CHECK(clean.stats.exhausted);
  CHECK_FALSE(clean.violation.has_value());
}

TEST_CASE("a plan model file reads back from the text it writes", "[verify][plan]") {
  auto spec = load_channel_model(R"(
world = "plan-channels"
policy = "passsm"
[bounds]
max_ranks = 4
transfer_bytes = [4096, 1048576]
collective_channels = [2]
[comm]
coll_channels = 4
p2p_channels = 4
)",
                                 "m.toml");
  REQUIRE(spec.ok());
  CHECK(spec->model.name == "m");
  CHECK(spec->model.bound.max_ranks == 4);
  auto again = load_channel_model(to_model_toml(spec->model), "again.toml");
  REQUIRE(again.ok());
  CHECK(to_model_toml(again->model) == to_model_toml(spec->model));
  auto life = load_lifecycle_model("world = \"plan-lifecycle\"\n[bounds]\nlaunches = 4\npoll_anywhere = true\n", "l");
  REQUIRE(life.ok());
  auto life_again = load_lifecycle_model(to_model_toml(life->model), "l2");
  REQUIRE(life_again.ok());
  CHECK(life_again->model.bound.launches == 4);
  CHECK(life_again->model.bound.poll_anywhere);
}

TEST_CASE("a bad plan model file is one line naming the file, line and key", "[verify][plan]") {
  auto msg = [](std::string_view text) {
    auto r = load_channel_model(text, "bad.toml");
    REQUIRE_FALSE(r.ok());
    return r.error().message();
  };
  CHECK_THAT(msg("world = \"plan-channels\"\npolicy = \"fastest\"\n"), Catch::Contains("bad.toml:2: policy"));
  CHECK_THAT(msg("world = \"plan-channels\"\n[bounds]\nmin_ranks = 3\nmax_ranks = 2\n"),
             Catch::Contains("bounds.max_ranks"));
  CHECK_THAT(msg("world = \"plan-channels\"\n[bounds]\ncollective_channels = [4]\n"),
             Catch::Contains("comm.coll_channels"));
  CHECK_THAT(msg("world = \"plan-channels\"\n[bounds]\ntransfer_bytes = []\n"), Catch::Contains("transfer_bytes"));
  CHECK_THAT(msg("world = \"plan-channels\"\ninvariants = [\"agreement\"]\n"), Catch::Contains("channel-agreement"));
  CHECK_THAT(msg("world = \"plan-channels\"\n[bounds]\nranks = 3\n"), Catch::Contains("bounds.ranks"));
  auto life = load_lifecycle_model("world = \"plan-lifecycle\"\n[bounds]\nlaunches = 9\n", "l.toml");
  REQUIRE_FALSE(life.ok());
  CHECK_THAT(life.error().message(), Catch::Contains("l.toml:3: bounds.launches"));
}

}  // namespace
}  // namespace railcheck::plan
