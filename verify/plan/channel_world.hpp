#pragma once
// The channel-agreement world: every communicator within a bound — rank count, which ordered
// pairs (self included) exchange how many bytes, the sequence of collectives and their channel
// counts, the work FIFO depth, and for a pre-scheduling policy whether each rank's p2p copies
// finished before its group ended. For each, every rank is scheduled and three invariants are
// checked:
//   agreement  every rank puts every collective on the same channels;
//   progress   the plans, executed against each other, all finish (no wait-for cycle);
//   lifecycle  every plan is reclaimed exactly once and never used after (PlanLifecycle).
// The smallest violating world (fewest operations, then fewest ranks) is kept, so a failure
// comes back as a minimal counterexample.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/plan/sched_trace.hpp"
#include "engine/plan/schedule_policy.hpp"

namespace railcheck::plan {

struct ChannelWorldBound {
  std::uint32_t min_ranks = 2;
  std::uint32_t max_ranks = 3;
  std::uint32_t max_colls = 2;
  std::vector<std::uint64_t> transfer_bytes = {64 * 1024};  // sizes a pair may exchange (or nothing)
  std::vector<std::uint32_t> coll_channel_counts = {1, 2};
  std::vector<std::uint32_t> work_fifo_depths = {4, 64 * 1024};
  CommShape shape = {.nranks = 2, .coll_channels = 2, .p2p_channels = 2, .p2p_channels_per_peer = 1};
};

struct ChannelCounterexample {
  std::string invariant;  // "agreement", "progress" or "lifecycle"
  std::string explanation;
  std::uint32_t operations = 0;  // transfers + collectives
  SchedInput input;
};

struct ChannelCheckResult {
  std::uint64_t worlds = 0;
  std::uint64_t violating_worlds = 0;
  std::optional<ChannelCounterexample> minimal;
};

// One world of the bound: the transfers between ordered pairs, the collectives (their channel
// counts, in order, on every rank), and which ranks' p2p copies finished before their group
// ended (bit r: rank r; read only by a pre-scheduling policy).
struct PairTransfer {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::uint64_t bytes = 0;
};
SchedInput world_input(const CommShape& shape, const std::vector<PairTransfer>& transfers,
                       const std::vector<std::uint32_t>& colls, std::uint32_t done_mask);
// Schedules every rank of `in` and checks the three invariants; the first one violated, or nothing.
std::optional<ChannelCounterexample> check_world(const SchedulePolicy& policy, const SchedInput& in,
                                                 std::uint32_t operations);

ChannelCheckResult check_channel_world(const SchedulePolicy& policy, const ChannelWorldBound& bound);

// The counterexample as a trace (sched_trace.hpp format) that `railcheck replay-sched` reads.
std::string to_trace(const SchedInput& input);

}  // namespace railcheck::plan
