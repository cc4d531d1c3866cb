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

struct FaultProfile {
  std::vector<LinkDown> downs;
  std::vector<LinkFlap> flaps;
  std::vector<LinkJitter> jitters;
  bool empty() const { return downs.empty() && flaps.empty() && jitters.empty(); }
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

}  // namespace railcheck
