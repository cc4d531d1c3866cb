// The MoE simulation's figures, pinned (backends/sim/routing/moe_sim.cpp). The
// expected times are what the driver printed before issue 34 made landings O(1) each (a wait_any
// over every comm in flight, 2026-11-25): that change touched only how the driver learns of a
// landing, not the model, so every time must stay the same. Decode worlds of 16 tokens
// per rank at EP 16, 32 and 64 (the EP sweep of docs/routing.md), seed 1. The fluid solver
// (moe_fluid.hpp) is held to the same doubles where SimGrid's sharing is within bandwidth.
#include <catch2/catch.hpp>
#include <iomanip>

#include "backends/sim/routing/moe_sim.hpp"
#include "backends/sim/routing/route_spec.hpp"
#include "engine/core/rng.hpp"
#include "engine/routing/moe_assignment.hpp"
#include "engine/routing/moe_tables.hpp"

using namespace railcheck;

namespace {

struct Expected {
  std::uint32_t ranks;
  routing::MoeScheme scheme;
  double dispatch_s;
  double combine_s;
  // SimGrid kept every link within its bandwidth here; in the flat worlds from EP 32 up its lazy
  // update over-fills some NVLink links (simgrid_lazy_sharing_test.cpp, docs/routing.md).
  bool within_bandwidth;
};

// From `railcheck route moe --json` on the shipped spec with moe.ranks = EP and
// moe.tokens_per_rank = 16, printed with 17 significant digits (they round-trip exactly).
constexpr Expected kExpected[] = {
    {16, routing::MoeScheme::Flat, 9.687679999999999e-06, 1.690944e-05, true},
    {16, routing::MoeScheme::Hierarchical, 7.137438842203546e-06, 1.1454719999999999e-05, true},
    {32, routing::MoeScheme::Flat, 1.5655275977252842e-05, 2.866482855194651e-05, false},
    {32, routing::MoeScheme::Hierarchical, 1.152341333333333e-05, 1.922801777777777e-05, true},
    {64, routing::MoeScheme::Flat, 2.1958386835742975e-05, 4.07071501894469e-05, false},
    {64, routing::MoeScheme::Hierarchical, 1.604049066666667e-05, 2.779775999999999e-05, true},
};

// The tables of one expected world.
routing::MoeTables tables_of(const sim::MoeSpec& s, const Expected& e) {
  const routing::MoeCluster cluster{e.ranks, s.fabric.gpus_per_node, static_cast<std::uint32_t>(s.model.experts)};
  SeededRng rng(s.seed);
  auto assignment = routing::draw_token_assignment(s.model, cluster, 16, rng);
  REQUIRE(assignment.ok());
  return routing::build_moe_tables(assignment.value(), cluster, e.scheme);
}

sim::MoeSpec shipped_moe_spec() {
  auto spec = sim::load_moe_spec(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/routing/deepseek-v3-moe-decode.toml");
  REQUIRE(spec.ok());
  return spec.value();
}

}  // namespace

TEST_CASE("MoE dispatch and combine times are the same doubles as before issue 34", "[sim][routing][moe]") {
  const sim::MoeSpec s = shipped_moe_spec();
  for (const Expected& e : kExpected) {
    const auto t = sim::simulate_moe(tables_of(s, e), e.ranks, s.fabric, 7392, 14336);
    INFO(std::setprecision(17) << "EP " << e.ranks << " " << routing::to_string(e.scheme) << ": dispatch "
                               << t.dispatch_s << " s, combine " << t.combine_s << " s");
    // A phase's time is the difference of two absolute instants, and SimGrid's clock goes on
    // from one engine to the next in a process: where it starts moves the last bits of the
    // difference. The CLI's JSON is bit-identical run by run (docs/routing.md); here, 1e-13.
    CHECK(t.dispatch_s == Approx(e.dispatch_s).epsilon(1e-13).margin(0));
    CHECK(t.combine_s == Approx(e.combine_s).epsilon(1e-13).margin(0));
  }
}

TEST_CASE("the fluid MoE solver gives SimGrid's times wherever SimGrid keeps its links within bandwidth",
          "[sim][routing][moe]") {
  const sim::MoeSpec s = shipped_moe_spec();
  for (const Expected& e : kExpected) {
    const auto t = sim::simulate_moe(tables_of(s, e), e.ranks, s.fabric, 7392, 14336, sim::WireMode::Mailbox,
                                     sim::MoeSolver::Fluid);
    INFO(std::setprecision(17) << "EP " << e.ranks << " " << routing::to_string(e.scheme) << ": dispatch "
                               << t.dispatch_s << " s, combine " << t.combine_s << " s");
    if (e.within_bandwidth) {
      // Its clock starts where SimGrid's does in a fresh process: the CLI's doubles, to 1e-13.
      CHECK(t.dispatch_s == Approx(e.dispatch_s).epsilon(1e-13).margin(0));
      CHECK(t.combine_s == Approx(e.combine_s).epsilon(1e-13).margin(0));
    } else {
      // Links held to their bandwidth never finish sooner than SimGrid's over-full ones, and
      // here not more than 1 % later (measured: +0.6 % on EP 32's dispatch, +6e-7 on EP 64's).
      CHECK(t.dispatch_s >= e.dispatch_s);
      CHECK(t.combine_s >= e.combine_s);
      CHECK(t.dispatch_s <= 1.01 * e.dispatch_s);
      CHECK(t.combine_s <= 1.01 * e.combine_s);
    }
  }
}
