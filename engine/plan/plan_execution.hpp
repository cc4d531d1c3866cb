#pragma once
// Runs every rank's kernel plans against each other to see whether they finish. The rules are
// the device side's: a rank runs its plans in launch order (one stream); inside a plan each
// channel is one block working through its items in order; a collective item on channel c
// completes only when every rank's channel c is at the same collective (they form one ring or
// tree); a p2p half completes when the peer's channel c is at the opposite half of the same
// transfer. When nothing can move and some rank has work left, that is a hang, explained by
// the wait-for graph (wait_for_graph.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/plan/kernel_plan.hpp"
#include "engine/plan/wait_for_graph.hpp"

namespace railcheck::plan {

struct ExecutionReport {
  bool completed = false;
  std::uint64_t items_done = 0;
  std::vector<std::uint32_t> stuck_ranks;  // ranks with work left, when not completed
  std::optional<Hang> hang;
};

ExecutionReport execute_plans(const std::vector<RankSchedule>& ranks);

}  // namespace railcheck::plan
