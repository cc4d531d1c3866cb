// Plan lifecycle state machine (plan_lifecycle.hpp).
#include "engine/plan/plan_lifecycle.hpp"

#include <fmt/format.h>

#include <array>

#include "engine/core/engine_assert.hpp"

namespace railcheck::plan {

std::string_view name(PlanState s) {
  static constexpr std::array<std::string_view, 4> kNames = {"prepared", "launched", "reclaim-queued", "reclaimed"};
  if (!RAILCHECK_ASSERT(static_cast<std::size_t>(s) < kNames.size(), "a plan state is one of the four")) return "?";
  return kNames[static_cast<std::size_t>(s)];
}

Result<bool> PlanLifecycle::use(std::uint32_t plan, std::string_view by) const {
  if (plan >= plans_.size()) return Error{fmt::format("{}: no plan {}", by, plan), ""};
  if (plans_[plan].state == PlanState::Reclaimed)
    return Error{fmt::format("use after reclaim: {} reads plan {}, already reclaimed", by, plan),
                 "a reclaimer ran before the last reader of the plan"};
  return true;
}

Result<bool> PlanLifecycle::queue_reclaim(std::uint32_t plan, std::string_view by) {
  if (!RAILCHECK_ASSERT(plan < plans_.size(), "a reclaim is queued for a plan that was prepared"))
    return Error{fmt::format("{}: no plan {}", by, plan), ""};
  const auto s = plans_[plan].state;
  if (s == PlanState::ReclaimQueued || s == PlanState::Reclaimed)
    return Error{fmt::format("double reclaim: {} queues plan {} whose reclaim is already {}", by, plan, name(s)),
                 "two paths both think they own the plan's reclaim"};
  plans_[plan].state = PlanState::ReclaimQueued;
  callback_queue_.push_back(plan);
  return true;
}

Result<std::vector<std::uint32_t>> PlanLifecycle::prepare(const std::vector<PlanSpec>& specs) {
  if (auto polled = poll_callbacks(); !polled) return polled.error();
  RAILCHECK_ASSERT(callback_queue_.empty(), "prepare polls every queued reclaim first, as ncclLaunchPrepare does");
  std::vector<std::uint32_t> ids;
  bool persistent = false;
  for (const auto& spec : specs) {
    ids.push_back(static_cast<std::uint32_t>(plans_.size()));
    plans_.push_back(Plan{spec, PlanState::Prepared, false, false});
    persistent = persistent || spec.persistent;
  }
  // The condition reads persistentRefs before this launch adds to it, as NCCL's does.
  if (persistent || host_stream_mode()) {
    for (auto id : ids) plans_[id].host_callback_pending = plans_[id].spec.has_proxy_ops;
  }
  if (persistent) persistent_refs_ += static_cast<std::int64_t>(ids.size());
  return ids;
}

Result<bool> PlanLifecycle::host_stream_plan_task(std::uint32_t plan) {
  if (auto ok = use(plan, "hostStreamPlanTask (uploadProxyOps)"); !ok) return ok;
  if (!plans_[plan].spec.persistent) return queue_reclaim(plan, "hostStreamPlanTask");
  return true;
}

Result<bool> PlanLifecycle::launch_kernel(std::uint32_t plan) {
  if (auto ok = use(plan, "uploadWork"); !ok) return ok;
  Plan& p = plans_[plan];
  // A graph replays its persistent plans; any other plan is launched once. Its reclaim may
  // already be queued (its host callback can run before the launch call returns): only a
  // reclaim that ran makes the launch a use after free, which use() caught above.
  if (p.launched && !p.spec.persistent) return Error{fmt::format("plan {} launched twice", plan), ""};
  p.launched = true;
  if (p.state == PlanState::Prepared) p.state = PlanState::Launched;
  RAILCHECK_ASSERT(p.state != PlanState::Prepared && p.state != PlanState::Reclaimed,
                   "a launched plan is launched or its reclaim is queued, never reclaimed (use() checked)");
  if (!(p.spec.persistent || host_stream_mode())) return host_stream_plan_task(plan);
  if (!p.spec.persistent && !p.spec.has_proxy_ops) return queue_reclaim(plan, "ncclLaunchKernelAfter_NoCuda");
  return true;
}

Result<bool> PlanLifecycle::run_host_callback(std::uint32_t plan) {
  if (plan >= plans_.size() || !plans_[plan].host_callback_pending)
    return Error{fmt::format("no host callback pending for plan {}", plan), ""};
  plans_[plan].host_callback_pending = false;
  return host_stream_plan_task(plan);
}

Result<bool> PlanLifecycle::destroy_graph(const std::vector<std::uint32_t>& ids) {
  for (auto id : ids) {
    if (id >= plans_.size() || !plans_[id].spec.persistent)
      return Error{fmt::format("persistentDestructor: plan {} is not a persistent plan", id), ""};
    if (auto ok = queue_reclaim(id, "persistentDestructor"); !ok) return ok;
  }
  return true;
}

Result<std::size_t> PlanLifecycle::poll_callbacks() {
  std::vector<std::uint32_t> batch;
  batch.swap(callback_queue_);
  for (auto id : batch) {
    Plan& p = plans_[id];
    if (p.state != PlanState::ReclaimQueued)
      return Error{fmt::format("double reclaim: reclaimPlan runs for plan {} in state {}", id, name(p.state)), ""};
    p.state = PlanState::Reclaimed;
    if (p.spec.persistent) --persistent_refs_;
    RAILCHECK_ASSERT(persistent_refs_ >= 0, "each persistent plan is counted at prepare and reclaimed once");
  }
  return batch.size();
}

Result<bool> PlanLifecycle::check_all_reclaimed() const {
  for (std::uint32_t id = 0; id < plans_.size(); ++id) {
    if (plans_[id].state != PlanState::Reclaimed)
      return Error{fmt::format("leak: plan {} ends {}, never reclaimed", id, name(plans_[id].state)), ""};
    if (plans_[id].host_callback_pending)
      return Error{fmt::format("plan {} still has a host callback pending", id), ""};
  }
  if (persistent_refs_ != 0) return Error{fmt::format("persistentRefs ends at {}, not 0", persistent_refs_), ""};
  return true;
}

}  // namespace railcheck::plan
