// The plan lifecycle state machine (engine/plan/plan_lifecycle.hpp) on NCCL's paths, and its
// checks catching a double reclaim, a use after reclaim and a leak.
#include "engine/plan/plan_lifecycle.hpp"

#include <catch2/catch.hpp>

namespace railcheck::plan {
namespace {

std::uint32_t prepare_one(PlanLifecycle& life, PlanSpec spec) {
  auto ids = life.prepare({spec});
  REQUIRE(ids.ok());
  return ids.value().front();
}

TEST_CASE("a plain launch reclaims its plan inline via hostStreamPlanTask and the next poll frees it",
          "[plan][lifecycle]") {
  PlanLifecycle life(false);
  const auto id = prepare_one(life, {false, true});
  CHECK_FALSE(life.host_callback_pending(id));
  REQUIRE(life.launch_kernel(id).ok());
  CHECK(life.state(id) == PlanState::ReclaimQueued);
  REQUIRE(life.poll_callbacks().ok());
  CHECK(life.state(id) == PlanState::Reclaimed);
  CHECK(life.check_all_reclaimed().ok());
}

TEST_CASE("while a graph holds persistent plans, proxy-op plans are reclaimed by their host callback",
          "[plan][lifecycle]") {
  PlanLifecycle life(false);
  const auto graph = prepare_one(life, {true, true});
  CHECK(life.persistent_refs() == 1);
  REQUIRE(life.launch_kernel(graph).ok());
  REQUIRE(life.run_host_callback(graph).ok());
  CHECK(life.state(graph) == PlanState::Launched);  // persistent: the graph's destructor reclaims it

  const auto plain = prepare_one(life, {false, true});
  CHECK(life.host_callback_pending(plain));
  REQUIRE(life.launch_kernel(plain).ok());
  CHECK(life.state(plain) == PlanState::Launched);
  REQUIRE(life.run_host_callback(plain).ok());
  CHECK(life.state(plain) == PlanState::ReclaimQueued);

  REQUIRE(life.destroy_graph({graph}).ok());
  REQUIRE(life.poll_callbacks().ok());
  CHECK(life.persistent_refs() == 0);
  CHECK(life.check_all_reclaimed().ok());
}

TEST_CASE("queuing a plan's reclaim twice is a double reclaim", "[plan][lifecycle]") {
  PlanLifecycle life(false);
  const auto graph = prepare_one(life, {true, false});
  REQUIRE(life.launch_kernel(graph).ok());
  REQUIRE(life.destroy_graph({graph}).ok());
  auto again = life.destroy_graph({graph});
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.error().what, Catch::StartsWith("double reclaim") && Catch::Contains("plan 0"));
}

TEST_CASE("reading a plan after its reclaim is caught", "[plan][lifecycle]") {
  PlanLifecycle life(true);  // launch blocking: the host stream path
  const auto id = prepare_one(life, {false, true});
  REQUIRE(life.launch_kernel(id).ok());
  REQUIRE(life.run_host_callback(id).ok());
  REQUIRE(life.poll_callbacks().ok());
  auto late = life.launch_kernel(id);
  REQUIRE_FALSE(late.ok());
  CHECK_THAT(late.error().what, Catch::StartsWith("use after reclaim"));
}

TEST_CASE("a persistent plan whose graph is never destroyed is a leak with persistentRefs above zero",
          "[plan][lifecycle]") {
  PlanLifecycle life(false);
  const auto id = prepare_one(life, {true, false});
  REQUIRE(life.launch_kernel(id).ok());
  REQUIRE(life.poll_callbacks().ok());
  auto end = life.check_all_reclaimed();
  REQUIRE_FALSE(end.ok());
  CHECK_THAT(end.error().what, Catch::Contains("leak"));
}

}  // namespace
}  // namespace railcheck::plan
