#pragma once
// `railcheck swarm` without --seed or --shrink: a campaign of many seeds on every local core
// (swarm/swarm_pool.hpp), and under mpirun on every rank, rank 0 printing the merged summary.
#include "cli/commands.hpp"
#include "swarm/swarm_run.hpp"

namespace railcheck::cli {

int run_swarm_campaign(const SwarmOptions& o, const swarm::SwarmConfig& cfg);

}  // namespace railcheck::cli
