#pragma once
// Scheduling scenarios (scenarios/sched/*.toml): a communicator, a training-step workload of
// all-to-all p2p plus collectives, and the policies to replay it under. The workload expands
// into the same per-rank task streams a trace gives, so scenarios and traces share one replay.
// Keys and their meaning: docs/plan.md, "Scenario format".
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/sched_trace.hpp"

namespace railcheck::plan {

struct SchedScenario {
  std::string name;
  std::string description;
  std::vector<std::string> policies;  // default: every policy
  SchedInput input;
};

Result<SchedScenario> load_sched_scenario(std::string_view toml_text, const std::string& file);

}  // namespace railcheck::plan
