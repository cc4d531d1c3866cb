#pragma once
// Many seeds on every core. SimGrid runs one world at a time per process, so the pool runs
// `jobs` lanes of worker processes; lane k runs the seeds of index k, k + jobs, ... (seed =
// first + index * stride: stride is 1 except under mpirun, where a rank runs every n-th seed),
// and its worker writes one line per seed to its pipe; the parent reads them all, in whatever order they
// come. A worker runs at most `seeds_per_process` seeds, then exits and the parent forks a fresh
// one for the rest of the lane: SimGrid 3.32 adds callbacks to process-wide signals with every
// engine it builds and never removes them (the VM model's slot on Activity::on_completion, run for
// every finished transfer), so the n-th seed of a process pays for n engines (docs/swarm.md,
// "Throughput"). A worker that dies (a crash in the simulator or the engine) is reported as a
// finding for the seed it was running, so even a crash carries its seed, and the lane goes on
// with its next seed in a fresh process.
#include <cstdint>
#include <functional>
#include <optional>

#include "engine/core/result.hpp"
#include "swarm/swarm_run.hpp"

namespace railcheck::swarm {

// Measured on 400 seeds (docs/swarm.md, "Throughput"): a fork and SimGrid's first engine cost
// less than what a process loses by then.
constexpr unsigned kSeedsPerProcess = 16;

struct PoolPlan {
  std::uint64_t first_seed = 1;
  std::uint64_t stride = 1;            // seed of index i: first_seed + i * stride
  std::optional<std::uint64_t> seeds;  // how many; unset: until `seconds` runs out
  std::optional<double> seconds;       // wall-time budget: no seed starts after it
  unsigned jobs = 1;
  unsigned seeds_per_process = kSeedsPerProcess;
};

// The seed of index `index` in `plan`'s sequence.
constexpr std::uint64_t seed_at(const PoolPlan& plan, std::uint64_t index) {
  return plan.first_seed + index * plan.stride;
}

// `on_result` runs in the parent for every finished seed; `on_tick` about twice a second.
Result<bool> run_pool(const PoolPlan& plan, const SwarmConfig& cfg,
                      const std::function<void(const SeedResult&)>& on_result, const std::function<void()>& on_tick);

}  // namespace railcheck::swarm
