#pragma once
// One schedule of a transfer of N WRITE_IMMs (one immediate, one expectation of N) across at
// most one failover: the fate of every original write, the replay policy, the order in which
// copies land at the receiver, and when the receiver registers its expectation. Running a
// schedule feeds the real DuplicateFilter and ImmCounter (engine/imm) and records what the
// invariants need.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/imm/imm_replay.hpp"

namespace railcheck::imm {

struct Landing {
  std::uint32_t seq = 0;
  bool replay = false;  // the copy the sender posted again on the new path
};

struct Schedule {
  ReplayPolicy policy = ReplayPolicy::Resync;
  std::vector<WriteFate> fates;   // one per original write
  std::vector<Landing> landings;  // in arrival order
  std::size_t decided_at = 0;     // landings before this index precede the failover decision
  std::size_t expect_at = 0;      // the expectation is registered before landings[expect_at]
};

struct ScheduleOutcome {
  std::uint32_t completions = 0;           // times the expectation fired
  bool fired_with_writes_missing = false;  // fired while some write had not landed yet
  std::uint32_t max_counted_copies = 0;    // most copies of one write the counter counted
};

ScheduleOutcome run_schedule(const Schedule& s);

// The copies that land, given every original write's fate: before the failover decision, the
// originals that landed (Acked, AckLost); after it, the late originals and the copies the
// policy replays. `failed`: some write was not acked, so there is a decision (and a replay).
struct Arrivals {
  std::vector<Landing> before;
  std::vector<Landing> after;
  bool failed = false;
};
Arrivals arrivals_of(ReplayPolicy policy, const std::vector<WriteFate>& fates);

// "probe: fates [acked late] | w0 | decide | w1' w1 (expect before #2)"
std::string describe(const Schedule& s);

}  // namespace railcheck::imm
