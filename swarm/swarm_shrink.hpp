#pragma once
// Shrinking a failing swarm seed (issue 30 item 2): greedy delta debugging over the drawn world.
// Each pass tries smaller variants — fewer ranks, rails, paths, channels, messages, a smaller
// window, one direction, each fault removed, the slow receiver gone — and keeps any variant
// that still fails with the same kind of finding (same seed: the simulator's own draws then
// follow the smaller world). Passes repeat until none makes progress. The result is a scenario
// that `railcheck run` replays (scenario_toml.hpp).
#include <cstdint>
#include <functional>

#include "engine/core/result.hpp"
#include "swarm/swarm_run.hpp"

namespace railcheck::swarm {

struct ShrinkOutcome {
  Scenario scenario;           // the smallest failing world found; time_limit is its liveness bound
  SeedResult result;           // its run
  std::uint32_t runs = 0;      // worlds tried
  std::uint32_t accepted = 0;  // reductions kept
};

// Called after each accepted reduction with a one-line description of it.
using ShrinkProgress = std::function<void(const std::string& step, const Scenario& now)>;

// An error when the seed does not fail under `cfg` (nothing to shrink).
Result<ShrinkOutcome> shrink_seed(std::uint64_t seed, const SwarmConfig& cfg, std::uint32_t max_runs,
                                  const ShrinkProgress& progress = {});

}  // namespace railcheck::swarm
