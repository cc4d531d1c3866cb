#pragma once
// Explicit enumeration of every arrival order of an N-write ImmCounter transfer. With
// `failover` the enumerator also takes every fate of every original write (4^N) and the replay
// the policy posts for it. Landings before the failover decision are the originals that landed
// (Acked, AckLost) in every order; after it, the late originals and the replayed copies in
// every order (the new path and the dead one share no ordering, and SRD keeps none anyway);
// and the receiver's expectation at every position. RC's per-QP order is one of these orders,
// so a property that holds here holds for RC and SRD alike.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/core/result.hpp"
#include "verify/imm/imm_invariants.hpp"

namespace railcheck::imm {

struct ImmCheckSpec {
  std::uint32_t writes = 3;  // 1..4: up to (2N)! orders per fate assignment
  ReplayPolicy policy = ReplayPolicy::Resync;
  bool failover = true;
};

struct InvariantFinding {
  std::uint64_t schedules = 0;    // schedules violating it
  std::optional<Schedule> first;  // the first one found, replayable with run_schedule
};

struct ImmCheckReport {
  std::uint64_t schedules = 0;
  std::array<InvariantFinding, kImmInvariants> findings;
  bool clean() const;
  std::string summary() const;  // one line per invariant, with the first counterexample
};

Result<ImmCheckReport> check_every_order(const ImmCheckSpec& spec);

}  // namespace railcheck::imm
