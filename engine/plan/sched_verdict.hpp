#pragma once
// The verdict on a job from its replay (issue 40): healthy only when every rank's plans agree and
// complete and nothing in the input says the job stopped; divergent when the ranks' own inputs
// give one operation different plans (naming the first such operation, the ranks, the field and
// the settings behind it) or the plans cannot complete; inconclusive when the input cannot
// settle it, with the recording that would.
//
//   Healthy       exit 0   plans agree and complete; no rank's log ends mid-run
//   Divergent     exit 1   the first operation whose plans differ, or a hang the plans show
//   Inconclusive  exit 3   a divergence that follows from launch boundaries the log cannot show
//                          (each operation its own launch agrees) while the job did not complete;
//                          or plans that agree and complete for a job whose logs end mid-run or in
//                          an abort (the cause lies outside what was logged)
//
// Where boundaries are uncertain and both readings fault, the verdict reports the reading with each
// operation its own launch (what PyTorch issues outside batches and coalescing managers).
#include <optional>
#include <string>
#include <vector>

#include "engine/plan/sched_replay.hpp"
#include "engine/plan/sched_trace.hpp"

namespace railcheck::plan {

struct SchedVerdict {
  enum class Kind : std::uint8_t { Healthy, Divergent, Inconclusive };
  Kind kind = Kind::Healthy;
  std::vector<std::string> lines;  // the headline first, then causes and what to record
};

// `as_logged`: the replay of the input as it shows launch boundaries; `each_operation`: the same
// operations, each its own launch, where the boundaries are uncertain (nccl_log_import.hpp), else null.
SchedVerdict judge(const SchedInput& input, const ReplayResult& as_logged, const ReplayResult* each_operation);

// One policy's replay of both readings (nccl_log_import.hpp LogReadings; `each_operation` null
// where the boundaries are known) and the verdict on them. `show_each_operation`: the verdict
// weighed the second reading against a fault of the first, so a report shows it too.
struct PolicyVerdict {
  ReplayResult as_logged;
  std::optional<ReplayResult> each_operation;
  bool show_each_operation = false;
  SchedVerdict verdict;
};
Result<PolicyVerdict> replay_and_judge(const SchedInput& as_logged, const SchedInput* each_operation,
                                       const SchedulePolicy& policy, NcclVersion nccl);

// The worse of two verdicts (Divergent > Inconclusive > Healthy), for several policies.
SchedVerdict::Kind worse(SchedVerdict::Kind a, SchedVerdict::Kind b);

std::string_view name(SchedVerdict::Kind k);  // "HEALTHY", "DIVERGENT", "INCONCLUSIVE"

}  // namespace railcheck::plan
