#pragma once
// Times MoE dispatch and combine send tables by SimGrid's CM02 model, with the fluid solver or
// on SimGrid's engine (`solver` below). Every message is one copy of its tokens over NVLink
// (same node) or the NICs (other node). Stage-0 messages leave at once; a
// rank's stage-1 messages (hierarchical forwarding, or the RDMA send of reduced partial sums)
// leave when the last stage-0 message into that rank has landed. A phase ends when its last
// message lands. Kernel time, and the per-token pipelining DeepEP does inside a stage, are not
// modelled: this compares what the two schemes put on the wires.
#include <cstdint>

#include "backends/sim/routing/gpu_fabric.hpp"
#include "backends/sim/wire_mode.hpp"
#include "engine/routing/moe_tables.hpp"

namespace railcheck::sim {

struct MoeTiming {
  double dispatch_s = 0;
  double combine_s = 0;
  // SimGrid only: its clock when the run began. The clock runs on across the engines of one
  // process (a test binary, a sweep), so the phases are differences of larger numbers and carry
  // their rounding: about 1e-16 of this, which at seconds is 1e-10 of a microsecond phase.
  double engine_clock_at_start_s = 0;
};

// `solver`: Fluid (the default, `route moe`) computes the phases with SimGrid's CM02 sharing
// arithmetic but no engine (moe_fluid.hpp): seconds at EP 256 where SimGrid takes a minute.
// SimGrid (`route moe --simgrid`, a cross-check) runs them on SimGrid's engine with
// network/optim:Full (gpu_fabric.hpp), which agrees with Fluid to a few parts per million; with
// SimGrid's default Lazy optimisation it over-fills NVLink links in flat dispatch from EP 32 up
// and finishes up to 12 % sooner than links allow (docs/routing.md).
// `wire` picks SimGrid's driver (Fluid has none): Mailbox, one actor that puts every message to
// a permanent receiver; Sendto, an actor and a detached Comm::sendto per message (before issue
// 15, kept for one release). The same times either way, to 1e-12 relative.
enum class MoeSolver : std::uint8_t { Fluid, SimGrid };

MoeTiming simulate_moe(const routing::MoeTables& tables, std::uint32_t ranks, const FabricParams& fabric,
                       std::uint64_t dispatch_token_bytes, std::uint64_t combine_token_bytes,
                       MoeSolver solver = MoeSolver::Fluid, WireMode wire = WireMode::Mailbox);

}  // namespace railcheck::sim
