#pragma once
// One rank's host-side scheduler: ncclLaunchPrepare for each group it launches (NCCL 2.18
// src/enqueue.cc). A launch cuts the group's tasks into kernel plans: each plan gets a fresh
// WorkBudget and fresh channel loads, takes tasks in the policy's drain order until the budget
// or the queues run out, and the loop repeats while tasks remain.
#include <cstdint>
#include <deque>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/kernel_plan.hpp"
#include "engine/plan/peer_queues.hpp"
#include "engine/plan/schedule_policy.hpp"
#include "engine/plan/task.hpp"
#include "engine/plan/work_budget.hpp"

namespace railcheck::plan {

class RankScheduler {
 public:
  RankScheduler(const CommShape& shape, const SchedulePolicy& policy, std::uint32_t rank);

  // Schedules one group; returns how many plans it made. Fails only when a single task cannot
  // fit an empty plan (a work FIFO too shallow for its channel count) or names a bad peer.
  Result<std::uint32_t> launch(const TaskGroup& group);

  RankSchedule take() { return std::move(schedule_); }

 private:
  struct Queues {
    std::deque<CollTask> colls;
    PeerQueues sends;
    PeerQueues recvs;
    std::uint64_t p2p_left = 0;
    std::uint64_t coll_bytes_total = 0;
  };

  Result<Queues> enqueue(const TaskGroup& group) const;
  std::vector<std::uint64_t> pre_schedule_p2p(Queues& q, bool done_before_end) const;
  void drain_colls(Queues& q, KernelPlan& plan, WorkBudget& budget, std::uint64_t bytes_per_channel);
  void drain_p2p(Queues& q, KernelPlan& plan, WorkBudget& budget) const;
  KernelPlan new_plan(std::uint32_t group, const std::vector<std::uint64_t>& loads) const;

  CommShape shape_;
  SchedulePolicy policy_;
  std::uint32_t rank_;
  std::uint32_t next_coll_seq_ = 0;
  std::uint32_t next_group_ = 0;
  RankSchedule schedule_;
};

// Every rank's scheduler on its own stream; the result is indexed by rank.
Result<std::vector<RankSchedule>> schedule_all(const CommShape& shape, const SchedulePolicy& policy,
                                               const std::vector<RankStream>& streams);

}  // namespace railcheck::plan
