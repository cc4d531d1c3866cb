// The channel-agreement world (verify/plan/channel_world.hpp): a minimal PassSm counterexample
// is found; the nccl policy exhausts the same bound clean.
#include "verify/plan/channel_world.hpp"

#include <catch2/catch.hpp>

#include "engine/plan/sched_trace.hpp"

namespace railcheck::plan {
namespace {

TEST_CASE("passsm: the world finds a two-operation counterexample on two ranks", "[verify][plan]") {
  const auto r = check_channel_world(policy_by_name("passsm").value(), ChannelWorldBound{});
  INFO("worlds " << r.worlds << ", violating " << r.violating_worlds);
  REQUIRE(r.minimal.has_value());
  INFO(r.minimal->explanation << "\n" << to_trace(r.minimal->input));
  CHECK(r.minimal->invariant == "agreement");
  CHECK(r.minimal->operations == 2);  // one transfer, one collective: nothing smaller can diverge
  CHECK(r.minimal->input.shape.nranks == 2);
  // The trace it prints replays to the same verdict.
  auto again = parse_sched_trace(to_trace(r.minimal->input), "counterexample.jsonl");
  REQUIRE(again.ok());
  CHECK(again->ranks.size() == 2);
}

TEST_CASE("nccl: every world within the bound agrees, completes and reclaims each plan once", "[verify][plan]") {
  const auto r = check_channel_world(policy_by_name("nccl").value(), ChannelWorldBound{});
  INFO((r.minimal ? r.minimal->invariant + ": " + r.minimal->explanation + "\n" + to_trace(r.minimal->input)
                  : std::string("clean")));
  // Every world of the bound was visited: (2^(2*2) + 2^(3*3)) pair patterns x 6 collective
  // sequences x 2 FIFO depths.
  CHECK(r.worlds == (16 + 512) * 6 * 2);
  CHECK(r.violating_worlds == 0);
  CHECK_FALSE(r.minimal.has_value());
}

}  // namespace
}  // namespace railcheck::plan
