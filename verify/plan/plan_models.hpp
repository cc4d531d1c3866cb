#pragma once
// Model files of the plan worlds for `railcheck check` (docs/verify.md, "Plan and ImmCounter
// worlds"): `world = "plan-channels"` (channel_search.hpp) or `world = "plan-lifecycle"`
// (lifecycle_world.hpp), their bounds, a [search] table and an `invariants` selection as in a
// failover model file. Each model also writes itself back as a model file: a counterexample
// trace carries that text, so replaying it reads the model through the same loader.
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "verify/explorer.hpp"
#include "verify/plan/channel_world.hpp"
#include "verify/plan/lifecycle_world.hpp"

namespace railcheck::plan {

struct ChannelModel {
  std::string name = "plan-channels";
  std::string policy = "nccl";  // a scheduling policy (engine/plan/schedule_policy.hpp)
  ChannelWorldBound bound;
};

struct LifecycleModel {
  std::string name = "plan-lifecycle";
  LifecycleBound bound;
};

template <typename Model>
struct PlanCheckSpec {
  Model model;
  verify::SearchLimits limits;
  std::vector<std::string> invariants;  // names; empty = all
};

Result<PlanCheckSpec<ChannelModel>> load_channel_model(std::string_view text, const std::string& file);
Result<PlanCheckSpec<LifecycleModel>> load_lifecycle_model(std::string_view text, const std::string& file);

std::string to_model_toml(const ChannelModel& m);
std::string to_model_toml(const LifecycleModel& m);

// One line, for reports.
std::string describe(const ChannelModel& m);
std::string describe(const LifecycleModel& m);

}  // namespace railcheck::plan
