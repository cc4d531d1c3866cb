#pragma once
// The plan-lifecycle world: every interleaving, within a bound, of one thread's launches
// (ncclLaunchPrepare then the kernel launch, in program order) with the asynchronous events
// around them — host-stream callbacks running, the user destroying a CUDA graph — for every
// mix of persistent / non-persistent plans, with or without proxy ops, with or without launch
// blocking. At the end the communicator drains: pending callbacks run, graphs are destroyed,
// callbacks are polled. Invariants (PlanLifecycle's checks): a reclaim is queued once and runs
// once, nothing reads a plan after its reclaim, persistentRefs returns to zero.
//
// NCCL polls the callback queue only at the start of ncclLaunchPrepare, so persistentRefs
// cannot change between a launch's prepare and its kernel-after step; `poll_anywhere` drops
// that rule (as if another thread polled) and the world must then find a double reclaim.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace railcheck::plan {

struct LifecycleBound {
  std::uint32_t launches = 2;
  bool poll_anywhere = false;
};

struct LifecycleCheckResult {
  std::uint64_t paths = 0;
  std::optional<std::string> violation;
  std::vector<std::string> steps;  // the path that led to it
};

LifecycleCheckResult check_lifecycle_world(const LifecycleBound& bound);

}  // namespace railcheck::plan
