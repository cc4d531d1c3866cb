#pragma once
// What one swarm seed draws: a world (ranks, rails, paths, NIC, messages, window, channels,
// grouped receives, replay policy, engine tunables within their table ranges) and a compound
// fault schedule. Swarm testing's twist (Groce et al., ISSTA 2012): each seed first switches
// whole fault kinds off, so some runs pile many faults of one or two kinds into one corner
// instead of spreading a few of every kind thin. Everything comes from the seed: the same seed
// draws the same world on every machine.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/failover/replay_policy.hpp"
#include "models/scenario.hpp"

namespace railcheck::swarm {

enum class FaultKind : std::uint8_t {
  LinkDown,       // a NIC link dies for good
  Outage,         // a link dies and comes back
  Flap,           // a link flaps periodically
  OneWayLoss,     // packets leaving a NIC are lost (all, or a fraction): a gray failure
  DelaySpike,     // extra latency with per-packet spread on a link for a while
  Congestion,     // incast: background flows converge on a link
  Rnr,            // a slow receiver holds each re-post (RNR NAKs)
  StandbyDeath,   // the primary dies, then the standby the failover will pick
  DoubleFailure,  // two links die at (almost) the same instant
  PeerStall,      // a peer process stops (SIGSTOP, GC) while its NIC keeps running
};
constexpr std::size_t kFaultKinds = 10;
std::string_view to_string(FaultKind k);
using KindSet = std::uint32_t;  // bit k: FaultKind k
constexpr KindSet bit(FaultKind k) { return KindSet{1} << static_cast<unsigned>(k); }

struct DrawLimits {
  std::uint32_t max_ranks = 64;        // the rank tail is cut here (campaigns may raise it to 1024)
  std::optional<ReplayPolicy> policy;  // force one (e.g. naive, the seed's unsafe rule); else drawn
};

struct DrawnWorld {
  Scenario scenario;    // time_limit is the liveness bound
  KindSet enabled = 0;  // kinds this seed left switched on
  KindSet drawn = 0;    // kinds that made it into the schedule
};

DrawnWorld draw_world(std::uint64_t seed, const DrawLimits& limits);

// The liveness bound: by this simulated instant every connection has delivered everything or
// failed cleanly, whatever the faults did; past it, work left outstanding is a hang. Derived
// from the tunables (hardware retry window, soft RTO and its ceiling, control timeout, probe
// delay, liveness detector, heartbeats), the fault schedule's last instant and the workload's
// transfer time, with generous slack: it must never call a slow run hung.
Nanos liveness_bound(const Scenario& sc);

// Payload time of the busiest NIC link if nothing went wrong, for placing faults and bounds.
Nanos transfer_estimate(const Scenario& sc);

}  // namespace railcheck::swarm
