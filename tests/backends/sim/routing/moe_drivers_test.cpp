// The MoE simulation's two SimGrid drivers (backends/sim/routing/moe_sim.cpp, `route moe
// --simgrid`): an actor and a detached sendto per message (before issue 15), and one actor that
// puts every message to a permanent receiver. Same routes, sizes and release rule, so the same
// dispatch and combine times.
#include <catch2/catch.hpp>

#include "backends/sim/routing/moe_sim.hpp"
#include "backends/sim/routing/route_spec.hpp"
#include "engine/core/rng.hpp"
#include "engine/routing/moe_assignment.hpp"
#include "engine/routing/moe_tables.hpp"

using namespace railcheck;

TEST_CASE("both MoE drivers give the same dispatch and combine times, flat and hierarchical", "[sim][routing][moe]") {
  auto spec = sim::load_moe_spec(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/routing/deepseek-v3-moe-decode.toml");
  REQUIRE(spec.ok());
  sim::MoeSpec s = spec.value();
#ifdef RAILCHECK_SANITIZE
  // The per-message driver starts an actor per message, a thread each in the sanitizer tree:
  // two nodes there (the shipped 64 ranks in the optimised tree).
  s.ranks = 16;
#endif
  const routing::MoeCluster cluster{s.ranks, s.fabric.gpus_per_node, static_cast<std::uint32_t>(s.model.experts)};
  SeededRng rng(s.seed);
  auto assignment = routing::draw_token_assignment(s.model, cluster, s.tokens_per_rank, rng);
  REQUIRE(assignment.ok());
  for (const auto scheme : {routing::MoeScheme::Flat, routing::MoeScheme::Hierarchical}) {
    const auto tables = routing::build_moe_tables(assignment.value(), cluster, scheme);
    const auto old_driver =
        sim::simulate_moe(tables, s.ranks, s.fabric, 7392, 14336, sim::MoeSolver::SimGrid, sim::WireMode::Sendto);
    const auto new_driver =
        sim::simulate_moe(tables, s.ranks, s.fabric, 7392, 14336, sim::MoeSolver::SimGrid, sim::WireMode::Mailbox);
    INFO(routing::to_string(scheme) << ": dispatch " << old_driver.dispatch_s << " / " << new_driver.dispatch_s
                                    << " s, combine " << old_driver.combine_s << " / " << new_driver.combine_s << " s");
    CHECK(old_driver.dispatch_s > 0);
    CHECK(old_driver.combine_s > 0);
    // Messages landing at one instant are taken in another order, so SimGrid sums the shares
    // of the flows in another order: the same instants up to rounding.
    CHECK(new_driver.dispatch_s == Approx(old_driver.dispatch_s).epsilon(1e-12).margin(0));
    CHECK(new_driver.combine_s == Approx(old_driver.combine_s).epsilon(1e-12).margin(0));
  }
}
