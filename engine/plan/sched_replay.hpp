#pragma once
// Multi-rank replay: every rank's scheduler on its own task stream, the cross-rank channel
// comparison, then the plans executed against each other.
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/channel_agreement.hpp"
#include "engine/plan/plan_execution.hpp"
#include "engine/plan/sched_trace.hpp"
#include "engine/plan/schedule_policy.hpp"

namespace railcheck::plan {

struct ReplayResult {
  SchedulePolicy policy;
  NcclVersion nccl = NcclVersion::V2_28;
  std::vector<RankSchedule> schedules;
  AgreementReport agreement;
  ExecutionReport execution;

  bool violation() const { return agreement.first.has_value() || !execution.completed; }
};

// Schedules every rank under `nccl`'s rules (rank_scheduler.hpp for 2.18, nccl228_scheduler.hpp
// for 2.28), then compares and executes.
Result<ReplayResult> replay(const SchedInput& input, const SchedulePolicy& policy, NcclVersion nccl);

// The collectives whose channel range NCCL logged (TUNING lines, CollTask::logged_lo/hi) against
// the channels the replay chose for them.
struct LoggedAgreement {
  int logged = 0;
  int same = 0;
  std::string first_difference;
};
LoggedAgreement logged_agreement(const ReplayResult& r);

// Human-readable report: a per-collective, per-rank channel table (at most `max_ranks`
// columns and `max_rows` rows, '!' marking a row where ranks disagree), the first divergence
// with its loads, and the execution verdict with the hang explained.
std::string render_report(const ReplayResult& r, std::uint32_t max_ranks, std::uint32_t max_rows);

}  // namespace railcheck::plan
