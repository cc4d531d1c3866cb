#include <catch2/catch.hpp>
#include <xbt/config.hpp>

#include "backends/sim/routing/moe_sim.hpp"
#include "backends/sim/sim_run.hpp"
#include "models/scenario.hpp"

using namespace railcheck;

namespace {

// One MoE message of 50 MB between two nodes on SimGrid's engine (network/optim:Full): 1 ms at
// 50 GB/s plus two 2 us hops.
double one_message() {
  routing::MoeTables t;
  t.dispatch.messages.push_back({0, 1, routing::Fabric::Rdma, 0, 1});
  sim::FabricParams f;
  f.gpus_per_node = 1;
  return sim::simulate_moe(t, 2, f, 50'000'000, 0, sim::MoeSolver::SimGrid).dispatch_s;
}

}  // namespace

TEST_CASE("routing runs and scenario runs share one process, in either order, with the same SimGrid models",
          "[sim][routing]") {
  const double before = one_message();
  CHECK(before == Approx(0.001 + 4e-6).epsilon(1e-6));
  // The MoE engine's Full mode is its own: an engine made after it (here sim_run.cpp's, which
  // sets no network/optim) gets SimGrid's default.
  CHECK(simgrid::config::get_value<std::string>("network/optim") == "Lazy");
  auto sc = load_scenario_file(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/primary-dies.toml");
  REQUIRE(sc.ok());
  const auto out = sim::run_scenario(sc.value(), sc->seed, {});
  CHECK(out.summary.outcome == sim::RunOutcome::Delivered);
  CHECK(one_message() == Approx(before));
}
