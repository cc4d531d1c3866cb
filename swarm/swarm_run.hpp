#pragma once
// One swarm seed, start to end: draw the world (swarm_world.hpp), run it on the SimGrid driver
// under the invariant checker (swarm_checker.hpp), and say what happened and what it covered.
// A pure function of (seed, config): a failing seed replays with the same config.
#include <cstdint>
#include <optional>
#include <string>

#include "swarm/swarm_checker.hpp"
#include "swarm/swarm_world.hpp"
#include "verify/mutation.hpp"

namespace railcheck::swarm {

struct SwarmConfig {
  DrawLimits limits;
  verify::Mutation mutation = verify::Mutation::None;
};

struct SeedResult {
  std::uint64_t seed = 0;
  std::optional<Finding> finding;
  KindSet enabled = 0;
  KindSet drawn = 0;
  std::uint32_t phases = 0;        // bit per FailoverPhase reached
  std::uint32_t triggers = 0;      // bit per FailoverTrigger that started a failover
  bool connection_failed = false;  // some connection failed cleanly (allowed, counted)
  std::uint32_t ranks = 0;
  std::uint64_t digest = 0;  // of the event trace (swarm_checker.hpp)
  std::uint64_t batches = 0;
  Nanos sim_end{};
  double wall_s = 0;
};

// Runs `sc` with `seed` under the checker. The driver runs one world at a time per process.
SeedResult run_checked(const Scenario& sc, std::uint64_t seed, verify::Mutation mutation);
SeedResult run_seed(std::uint64_t seed, const SwarmConfig& cfg);

// The command line that replays `seed` under `cfg` ("railcheck swarm --seed 42 --policy naive").
std::string replay_command(std::uint64_t seed, const SwarmConfig& cfg);
// "seed 42: liveness at 1.2 s, connection 3: ... -- replay: railcheck swarm --seed 42"
std::string finding_line(const SeedResult& r, const SwarmConfig& cfg);

}  // namespace railcheck::swarm
