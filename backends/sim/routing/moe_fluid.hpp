#pragma once
// One MoE phase (moe_sim.hpp) timed without SimGrid's engine: max-min sharing by the arithmetic
// of SimGrid 3.32's CM02 network model with lazy updates, on arrays. SimGrid re-solves the
// sharing of a whole connected set of flows at every landing through its general machinery (an
// LMM system of intrusive lists, an action heap, simcalls, an actor woken per landing); here each
// connected set of links is a dense bipartite sharing (bipartite_sharing.hpp) whose solve costs
// O(links^2) in vector passes, whatever the flows in flight, so EP 256 with 128 tokens per rank
// takes seconds (docs/routing.md, "MoE at EP 256"). What it takes from SimGrid, and why:
//   - a message pays its route's latency first, then joins the sharing; its sharing penalty is
//     that latency (CM02's RTT unfairness; every flow of a link has the same, so it cancels);
//   - max-min by SimGrid's saturation loop: the link of least remaining / open flows saturates,
//     its open flows fixed at that level;
//   - lazy updates: only a set of links whose flows changed is re-solved; a flow's bytes advance
//     at the level of its bottleneck link, kept as one integral per link, and it lands when that
//     integral reaches the key it was given when it joined the link;
//   - events within surf/precision (1e-9 s) of the clock happen together, at the clock.
// Its figures are those of the solver before issue 45 item 2 (which rounded each flow's bytes as
// SimGrid does, to the bit) within 1e-9 relative, the tolerance the owner set; 1.5e-15 at
// worst where measured (docs/benchmarks.md, 2026-11-29). It gives SimGrid's figures to 1e-13
// wherever SimGrid's allocation keeps every link within its bandwidth. Where it does not, the
// difference is a SimGrid defect: its lazy update marks a flow's links as modified from the
// flow's first link only, so when that one is already marked, the flow's other links are left
// out of the solve and over-filled (flat dispatch from EP 32 up;
// simgrid_lazy_sharing_test.cpp shows it on five flows). Here every link of a changed flow is
// re-solved, the links stay within bandwidth, and the figures differ (docs/routing.md); SimGrid
// with network/optim:Full agrees with them to a few parts per million. This solver is `route
// moe`'s default; `route moe --simgrid` runs SimGrid's engine in Full mode as a cross-check.
#include <cstdint>

#include "backends/sim/routing/gpu_fabric.hpp"
#include "engine/routing/moe_tables.hpp"

namespace railcheck::sim {

// Seconds from `t0` (SimGrid's clock when the phase starts, which decides how its instants
// round) until the phase's last message lands. Stage-0 messages leave at t0; a rank's stage-1
// messages leave when its last stage-0 input lands.
double fluid_moe_phase(const routing::MoePhase& phase, std::uint32_t ranks, const FabricParams& fabric,
                       std::uint64_t token_bytes, double t0);

}  // namespace railcheck::sim
