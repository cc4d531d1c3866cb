#pragma once
// One MoE phase (moe_sim.hpp) timed without SimGrid's engine: max-min sharing by the arithmetic
// of SimGrid 3.32's CM02 network model with lazy updates, on arrays. SimGrid re-solves the
// sharing of a whole connected set of flows at every landing through its general machinery (an
// LMM system of intrusive lists, an action heap, simcalls, an actor woken per landing); here a
// landing costs a pass over the flows of its connected set, so EP 256 takes seconds, not a
// minute (docs/routing.md, "MoE at EP 256"). What it takes from SimGrid, and why:
//   - a message pays its route's latency first, then joins the sharing; its sharing penalty is
//     that latency (CM02's RTT unfairness);
//   - max-min by SimGrid's own saturation loop: per link remaining / usage, every link at the
//     minimum saturated at once, values min / penalty, and SimGrid's cut-offs (maxmin/precision
//     1e-5 on a link's remaining capacity and usage);
//   - lazy updates: only flows connected (through links) to a change are re-solved, and only
//     their remaining bytes are brought up to date, rounded as SimGrid rounds them;
//   - events within surf/precision (1e-9 s) of the clock happen together, at the clock.
// It gives SimGrid's figures to 1e-13 wherever SimGrid's allocation keeps every link within its
// bandwidth. Where it does not, the difference is a SimGrid defect: its lazy update marks a
// flow's links as modified from the flow's first link only, so when that one is already marked,
// the flow's other links are left out of the solve and over-filled (flat dispatch from EP 32 up;
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
