// The MoE simulation's figures, pinned: `route moe`'s default, the fluid solver
// (backends/sim/routing/moe_fluid.hpp), on the shipped decode spec, its 4096-token prefill, and
// decode worlds of 16 tokens per rank at EP 16, 32 and 64 (the EP sweep of docs/routing.md),
// seed 1. Where SimGrid's engine kept every link within its bandwidth, the figures are those
// `route moe` printed before issue 34 on SimGrid (network/optim Lazy, its default), and must stay
// so. In flat EP 32 and 64 SimGrid's lazy update over-fills NVLink links
// (simgrid_lazy_sharing_test.cpp): there the figures are the fluid solver's, which SimGrid's
// engine gives too with network/optim:Full (`route moe --simgrid`, held to them below).
#include <catch2/catch.hpp>
#include <iomanip>

#include "backends/sim/routing/moe_sim.hpp"
#include "backends/sim/routing/route_spec.hpp"
#include "engine/core/rng.hpp"
#include "engine/routing/moe_assignment.hpp"
#include "engine/routing/moe_tables.hpp"

using namespace railcheck;

namespace {

struct PinnedMoeWorld {
  std::uint32_t ranks;
  std::uint32_t tokens_per_rank;
  routing::MoeScheme scheme;
  double dispatch_s;
  double combine_s;
};

// Printed by `railcheck route moe --json` (17 significant digits, which round-trip exactly) on
// the shipped spec with moe.ranks and moe.tokens_per_rank set as listed. Before issue 34
// SimGrid's lazy update gave flat EP 32 1.5655275977252842e-05 / 2.866482855194651e-05 s and
// flat EP 64 2.1958386835742975e-05 / 4.07071501894469e-05 s, with links over their bandwidth.
constexpr PinnedMoeWorld kPinned[] = {
    {64, 128, routing::MoeScheme::Flat, 0.00013549951349434586, 0.00026090816},
    {64, 128, routing::MoeScheme::Hierarchical, 8.105744204684731e-05, 0.00015688522717020832},
    {64, 4096, routing::MoeScheme::Flat, 0.0039471103806833175, 0.0076531232},
    {64, 4096, routing::MoeScheme::Hierarchical, 0.002341728213333335, 0.0046444994844444445},
    {16, 16, routing::MoeScheme::Flat, 9.687679999999999e-06, 1.690944e-05},
    {16, 16, routing::MoeScheme::Hierarchical, 7.137438842203546e-06, 1.1454719999999999e-05},
    {32, 16, routing::MoeScheme::Flat, 1.574908182231822e-05, 2.8664957258847532e-05},
    {32, 16, routing::MoeScheme::Hierarchical, 1.152341333333333e-05, 1.922801777777777e-05},
    {64, 16, routing::MoeScheme::Flat, 2.1958400000000013e-05, 4.070719999999999e-05},
    {64, 16, routing::MoeScheme::Hierarchical, 1.604049066666667e-05, 2.779775999999999e-05},
};

// The tables of one pinned world.
routing::MoeTables tables_of(const sim::MoeSpec& s, const PinnedMoeWorld& w) {
  const routing::MoeCluster cluster{w.ranks, s.fabric.gpus_per_node, static_cast<std::uint32_t>(s.model.experts)};
  SeededRng rng(s.seed);
  auto assignment = routing::draw_token_assignment(s.model, cluster, w.tokens_per_rank, rng);
  REQUIRE(assignment.ok());
  return routing::build_moe_tables(assignment.value(), cluster, w.scheme);
}

sim::MoeSpec shipped_moe_spec() {
  auto spec = sim::load_moe_spec(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/routing/deepseek-v3-moe-decode.toml");
  REQUIRE(spec.ok());
  return spec.value();
}

}  // namespace

TEST_CASE("route moe's default solver gives the pinned MoE dispatch and combine times", "[sim][routing][moe]") {
  const sim::MoeSpec s = shipped_moe_spec();
  for (const PinnedMoeWorld& w : kPinned) {
    const auto t = sim::simulate_moe(tables_of(s, w), w.ranks, s.fabric, 7392, 14336);
    INFO(std::setprecision(17) << "EP " << w.ranks << ", " << w.tokens_per_rank << " tokens, "
                               << routing::to_string(w.scheme) << ": dispatch " << t.dispatch_s << " s, combine "
                               << t.combine_s << " s");
    // SimGrid's lazy figures (the pinned ones but flat EP 32 and 64) differ from the fluid
    // solver's by at most 6.7e-16 relative (docs/routing.md): the same doubles, to rounding.
    CHECK(t.dispatch_s == Approx(w.dispatch_s).epsilon(1e-13).margin(0));
    CHECK(t.combine_s == Approx(w.combine_s).epsilon(1e-13).margin(0));
  }
}

TEST_CASE("route moe --simgrid (network/optim Full) agrees with the default solver to 1e-4", "[sim][routing][moe]") {
  const sim::MoeSpec s = shipped_moe_spec();
  for (const PinnedMoeWorld& w : kPinned) {
    // The 16-token worlds: flat EP 32 is the smallest where SimGrid's lazy update over-fills
    // links, so a return of the lazy mode, or a drift of either solver, shows here.
    if (w.tokens_per_rank != 16) continue;
    const auto t = sim::simulate_moe(tables_of(s, w), w.ranks, s.fabric, 7392, 14336, sim::MoeSolver::SimGrid);
    INFO(std::setprecision(17) << "EP " << w.ranks << " " << routing::to_string(w.scheme) << " on SimGrid: dispatch "
                               << t.dispatch_s << " s, combine " << t.combine_s << " s");
    // Full mode takes its events' dates and remaining bytes to SimGrid's precisions otherwise
    // than the lazy mode the fluid solver follows: measured 2026-11-26 at most 1.6e-5 apart here
    // (EP 64 hierarchical dispatch; 2.3e-5 at EP 256), where the lazy mode's over-full links put
    // flat EP 32's dispatch 0.6 % sooner.
    CHECK(t.dispatch_s == Approx(w.dispatch_s).epsilon(1e-4).margin(0));
    CHECK(t.combine_s == Approx(w.combine_s).epsilon(1e-4).margin(0));
  }
}
