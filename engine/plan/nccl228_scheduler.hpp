#pragma once
// One rank's host-side scheduler as NCCL 2.28.9 runs it (src/enqueue.cc ncclLaunchPrepare):
// collectives prepared once per group (nccl228_prepare), then plans cut while tasks remain:
// each plan takes collectives while its budget lasts (testBudget over kernel-argument and
// work-FIFO bytes, scheduleCollTasksToPlan; channels from nccl228_coll_cells), and p2p only once
// no collective is left (scheduleP2pTasksToPlan, channels from nccl228_p2p). What differs from
// 2.18 (rank_scheduler.hpp): the budget is bytes of work structs and batches, not one item per
// channel share, so hundreds of small collectives fit one plan; and channels are poured from
// channel 0 by traffic, not picked by least load, so no rank-local state can move them.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/kernel_plan.hpp"
#include "engine/plan/schedule_policy.hpp"
#include "engine/plan/task.hpp"

namespace railcheck::plan {

// Where one operation of a group went, in the terms the profiler records.
struct OpPlacement {
  bool is_coll = true;
  std::uint32_t group = 0;     // index of the group on its rank
  std::uint32_t input = 0;     // index in the group's colls (is_coll) or p2ps
  std::uint32_t plan = 0;      // index of the plan on its rank
  std::uint32_t position = 0;  // order in the plan: collectives first, then p2p (as NCCL queues them)
  std::vector<std::uint32_t> channels;
  int algo = -1;  // collectives: NCCL_ALGO_* and NCCL_PROTO_* indices, nWarps
  int proto = -1;
  int warps = 0;
  std::string rule;  // the NCCL rules that decided, with their inputs
};

class RankScheduler228 {
 public:
  // `explain`: keep an OpPlacement, with its rule text, per operation (align needs them; a
  // replay does not, and formatting them costs more than scheduling).
  RankScheduler228(const CommShape& shape, const SchedulePolicy& policy, std::uint32_t rank, bool explain);

  // Schedules one group; returns how many plans it made.
  Result<std::uint32_t> launch(const TaskGroup& group);

  RankSchedule take_schedule() { return std::move(schedule_); }
  std::vector<OpPlacement> take_placements() { return std::move(placements_); }

 private:
  CommShape shape_;
  SchedulePolicy policy_;
  std::uint32_t rank_;
  bool explain_;
  std::uint32_t next_group_ = 0;
  RankSchedule schedule_;
  std::vector<OpPlacement> placements_;
};

struct Schedules228 {
  std::vector<RankSchedule> schedules;           // by rank, as the 2.18 scheduler's
  std::vector<std::vector<OpPlacement>> placed;  // by rank, in schedule order (when explained)
};

// `rank_shapes`: each rank's own communicator parameters (its settings and INIT lines), by rank;
// ranks beyond it use `shape`.
Result<Schedules228> schedule_all_2_28(const CommShape& shape, const SchedulePolicy& policy,
                                       const std::vector<RankStream>& streams, bool explain = false,
                                       const std::vector<CommShape>& rank_shapes = {});

}  // namespace railcheck::plan
