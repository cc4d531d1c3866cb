#pragma once
// Link faults a scenario injects: a link goes down for good, goes down and comes back, flaps
// periodically, or gets extra latency for a while. Drivers expand a profile into a sorted list
// of timed link changes, so every driver (SimGrid, the model checker's timed replay) sees the
// same faults.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/time.hpp"

namespace railcheck {

// Which NIC link: one link per (rank, rail).
struct LinkRef {
  std::uint32_t rank = 0;
  std::uint32_t rail = 0;
  bool operator==(const LinkRef&) const = default;
};

struct LinkDown {  // down at `at`; back up at `until` if set
  LinkRef link;
  Nanos at{};
  std::optional<Nanos> until;
};
struct LinkFlap {  // `count` cycles of: down for `down_for`, then up for `period - down_for`
  LinkRef link;
  Nanos start{};
  Nanos period{};
  Nanos down_for{};
  std::uint32_t count = 1;
};
struct LinkJitter {  // extra one-way latency on the link in [at, until); `spread` is drawn per packet
  LinkRef link;
  Nanos at{};
  Nanos until{};
  Nanos extra{};
  Nanos spread{};
};

// Packets leaving `link` (from its rank towards the fabric) are lost with `probability` in
// [at, until): a gray failure in one direction; 1 is a one-way cut. The link stays "up".
struct OneWayLoss {
  LinkRef link;
  Nanos at{};
  Nanos until{};
  double probability = 1;
};
// `flows` background flows, each able to fill the link alone, converge on `link` in
// [at, until) from the other ranks' NICs on its rail: flows = 8 offers 8x the link's bandwidth.
struct Incast {
  LinkRef link;
  Nanos at{};
  Nanos until{};
  std::uint32_t flows = 8;
};
// Rank `rank`'s process stops in [at, at + for_): its engines are not stepped, its timers do
// not fire, it polls nothing and posts nothing (SIGSTOP, a long GC or page-fault storm). Its
// NICs keep running: they answer one-sided operations and ACK what lands in posted receives.
struct ProcessStall {
  std::uint32_t rank = 0;
  Nanos at{};
  Nanos for_{};
};

struct FaultProfile {
  std::vector<LinkDown> downs;
  std::vector<LinkFlap> flaps;
  std::vector<LinkJitter> jitters;
  std::vector<OneWayLoss> losses;
  std::vector<Incast> incasts;
  std::vector<ProcessStall> stalls;
  bool empty() const {
    return downs.empty() && flaps.empty() && jitters.empty() && losses.empty() && incasts.empty() && stalls.empty();
  }
};

// One change of a link's state at one instant, after expanding flaps.
struct LinkChange {
  Nanos at{};
  LinkRef link;
  bool up = false;
};
// Down/up changes sorted by time (ties: the order the profile lists them). Jitter is not a
// state change; drivers read it with extra_latency().
std::vector<LinkChange> expand_link_changes(const FaultProfile& p);
// The deterministic part of the jitter in force on `link` at `t` (0 when none).
Nanos extra_latency(const FaultProfile& p, const LinkRef& link, Nanos t);
// The earliest instant any link goes down (for summaries), if any.
std::optional<Nanos> first_fault_time(const FaultProfile& p);
// The earliest instant of any fault a detector must not mistake for a dead rail (jitter, loss
// below 1, incast, a stalled process), if any: the "fault" of a scenario whose failovers are
// false alarms.
std::optional<Nanos> first_benign_fault_time(const FaultProfile& p);
// Probability that a packet leaving `link` at `t` is lost (overlapping windows: the largest).
double one_way_loss(const FaultProfile& p, const LinkRef& link, Nanos t);
// The end of the stall `rank` is in at `t`, if it is in one.
std::optional<Nanos> stalled_until(const FaultProfile& p, std::uint32_t rank, Nanos t);

}  // namespace railcheck
