#pragma once
// The life of a kernel plan on one communicator, after NCCL 2.18 (seed §2.b/§2.c):
//   ncclLaunchPrepare   polls the callback queue (reclaiming what other threads queued), makes
//                       the plans, and — when persistent, persistentRefs != 0 or launch
//                       blocking — queues hostStreamPlanCallback for each plan with proxy ops;
//                       a persistent launch adds its plans to persistentRefs.
//   kernel launch       uploadWork reads the plan; then ncclLaunchKernelAfter_NoCuda either
//                       runs hostStreamPlanTask inline (none of the three conditions holds) or
//                       queues the reclaim itself for a non-persistent plan without proxy ops.
//   host callback       hostStreamPlanTask: uploads proxy ops (reads the plan) and queues the
//                       reclaim of a non-persistent plan.
//   graph destroyed     persistentDestructor queues the reclaim of every persistent plan.
//   reclaimPlan         (run by a poll) frees the plan; a persistent one decrements
//                       persistentRefs.
// Invariants: a plan's reclaim is queued once and runs once; nothing reads a plan after its
// reclaim; persistentRefs is back to zero when every graph is gone. Each step checks its
// precondition and returns an Error naming the plan when it is violated.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::plan {

enum class PlanState : std::uint8_t {
  Prepared,       // made by ncclLaunchPrepare, kernel not launched yet
  Launched,       // kernel launched, reclaim not queued yet
  ReclaimQueued,  // its reclaimer sits in the callback queue
  Reclaimed,      // memory returned to the pool
};
std::string_view name(PlanState s);

struct PlanSpec {
  bool persistent = false;
  bool has_proxy_ops = true;
};

class PlanLifecycle {
 public:
  explicit PlanLifecycle(bool launch_blocking) : launch_blocking_(launch_blocking) {}

  // ncclLaunchPrepare for one launch; returns the new plans' ids.
  Result<std::vector<std::uint32_t>> prepare(const std::vector<PlanSpec>& plans);
  // uploadWork + cudaLaunchKernel + ncclLaunchKernelAfter_NoCuda for one plan.
  Result<bool> launch_kernel(std::uint32_t plan);
  // hostStreamPlanCallback running on the host stream.
  Result<bool> run_host_callback(std::uint32_t plan);
  // The CUDA graph holding these persistent plans is destroyed.
  Result<bool> destroy_graph(const std::vector<std::uint32_t>& plans);
  // ncclCommPollCallbacks: runs every queued reclaimer; returns how many ran.
  Result<std::size_t> poll_callbacks();

  // End-of-life check: every plan reclaimed, no host callback pending, persistentRefs == 0.
  Result<bool> check_all_reclaimed() const;

  PlanState state(std::uint32_t plan) const { return plans_[plan].state; }
  bool host_callback_pending(std::uint32_t plan) const { return plans_[plan].host_callback_pending; }
  std::size_t plan_count() const { return plans_.size(); }
  std::int64_t persistent_refs() const { return persistent_refs_; }
  std::size_t queued() const { return callback_queue_.size(); }

 private:
  struct Plan {
    PlanSpec spec;
    PlanState state = PlanState::Prepared;
    bool host_callback_pending = false;
    bool launched = false;
  };

  bool host_stream_mode() const { return persistent_refs_ != 0 || launch_blocking_; }
  Result<bool> use(std::uint32_t plan, std::string_view by) const;
  Result<bool> queue_reclaim(std::uint32_t plan, std::string_view by);
  Result<bool> host_stream_plan_task(std::uint32_t plan);

  bool launch_blocking_;
  std::int64_t persistent_refs_ = 0;
  std::vector<Plan> plans_;
  std::vector<std::uint32_t> callback_queue_;
};

}  // namespace railcheck::plan
