#pragma once
// Many seeds on every core. SimGrid runs one world at a time per process, so the pool forks
// `jobs` worker processes; worker k runs seeds first + k, first + k + jobs, ... and writes one
// line per seed to its pipe; the parent reads them all, in whatever order they come. A worker
// that dies (a crash in the simulator or the engine) is reported as a finding for the seed it
// was running, so even a crash carries its seed.
#include <cstdint>
#include <functional>
#include <optional>

#include "engine/core/result.hpp"
#include "swarm/swarm_run.hpp"

namespace railcheck::swarm {

struct PoolPlan {
  std::uint64_t first_seed = 1;
  std::optional<std::uint64_t> seeds;  // how many; unset: until `seconds` runs out
  std::optional<double> seconds;       // wall-time budget: no seed starts after it
  unsigned jobs = 1;
};

// `on_result` runs in the parent for every finished seed; `on_tick` about twice a second.
Result<bool> run_pool(const PoolPlan& plan, const SwarmConfig& cfg,
                      const std::function<void(const SeedResult&)>& on_result, const std::function<void()>& on_tick);

}  // namespace railcheck::swarm
