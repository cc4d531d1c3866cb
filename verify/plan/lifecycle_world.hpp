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
//
// LifecycleWorld is a world for verify/explorer.hpp (`railcheck check` with
// world = "plan-lifecycle"): its first steps choose launch blocking and each launch's kind, the
// rest interleave; a step that breaks a rule ends the world with the violation.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/plan/plan_lifecycle.hpp"
#include "verify/invariant.hpp"

namespace railcheck::plan {

struct LifecycleBound {
  std::uint32_t launches = 2;
  bool poll_anywhere = false;
};

struct LifecycleStep {
  enum class Kind : std::uint8_t {
    Blocking,      // value: launch blocking on (1) or off (0)
    LaunchKind,    // launch a is persistent (value bit 0) and has proxy ops (value bit 1)
    Prepare,       // ncclLaunchPrepare of launch a
    LaunchKernel,  // the kernel launch of launch a (plan b)
    HostCallback,  // plan b's host-stream callback runs
    DestroyGraph,  // the graph holding launch a's persistent plan b is destroyed
    Poll,          // another thread polls the callback queue (poll_anywhere only)
    Drain,         // the communicator ends: callbacks run, graphs go, the last poll
  };
  Kind kind = Kind::Blocking;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t value = 0;
  bool operator==(const LifecycleStep&) const = default;
};

// "launch blocking off", "launch 0 persistent with proxy ops", "prepare launch 0",
// "launch kernel of plan 0", "host callback of plan 1", "destroy graph of plan 0",
// "poll callbacks (another thread)", "drain: host callbacks, graph destruction, final poll".
std::string to_string(const LifecycleStep& s);

class LifecycleWorld {
 public:
  using ChoiceType = LifecycleStep;
  explicit LifecycleWorld(const LifecycleBound& bound) : bound_(bound) {}

  std::vector<LifecycleStep> choices() const;
  void apply(const LifecycleStep& s);
  std::uint64_t fingerprint() const;

  // The rule the last step broke (the world has ended), or nothing.
  const std::optional<std::string>& violation() const { return violation_; }

 private:
  struct LaunchKind {
    bool persistent = false;
    bool has_proxy_ops = false;
  };
  void program_choices(std::vector<LifecycleStep>& out) const;
  Result<bool> drain();

  LifecycleBound bound_;
  std::optional<bool> blocking_;
  std::vector<LaunchKind> kinds_;
  PlanLifecycle life_{false};
  std::uint32_t next_ = 0;              // program counter: 2*i = prepare launch i, 2*i+1 = its kernel launch
  std::vector<std::uint32_t> plan_of_;  // launch -> plan id
  std::vector<char> graph_destroyed_;   // launch -> its graph is gone
  bool drained_ = false;
  std::optional<std::string> violation_;
};

// plan-lifecycle: the one invariant, PlanLifecycle's checks.
std::span<const verify::Invariant<LifecycleWorld>> lifecycle_invariants();

struct LifecycleCheckResult {
  std::uint64_t paths = 0;  // distinct end states reached
  std::optional<std::string> violation;
  std::vector<std::string> steps;  // the path that led to it
};

// Depth-first over the whole bound; stops at the first violation.
LifecycleCheckResult check_lifecycle_world(const LifecycleBound& bound);

}  // namespace railcheck::plan
