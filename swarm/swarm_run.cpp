#include "swarm/swarm_run.hpp"

#include <fmt/format.h>

#include <chrono>

#include "backends/sim/sim_run.hpp"
#include "engine/core/engine_assert.hpp"

namespace railcheck::swarm {

SeedResult run_checked(const Scenario& sc, std::uint64_t seed, verify::Mutation mutation) {
  // A tripped engine assertion is a finding of this seed, not the end of the process.
  set_assertion_mode(AssertionMode::Record);
  reset_assertion_failures();
  SwarmChecker checker(mutation);
  const auto t0 = std::chrono::steady_clock::now();
  const sim::RunOutput out = sim::run_scenario(sc, seed, {}, sim::kDefaultWire, &checker);
  SeedResult r;
  r.seed = seed;
  r.finding = checker.finding();
  r.phases = checker.phases();
  r.triggers = checker.triggers();
  r.connection_failed = out.summary.connections_failed > 0;
  r.ranks = sc.topology.ranks;
  r.digest = checker.digest();
  r.batches = checker.batches();
  r.sim_end = out.summary.end_time;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

SeedResult run_seed(std::uint64_t seed, const SwarmConfig& cfg) {
  const DrawnWorld w = draw_world(seed, cfg.limits);
  SeedResult r = run_checked(w.scenario, seed, cfg.mutation);
  r.enabled = w.enabled;
  r.drawn = w.drawn;
  return r;
}

std::string replay_command(std::uint64_t seed, const SwarmConfig& cfg) {
  std::string cmd = fmt::format("railcheck swarm --seed {}", seed);
  if (cfg.limits.policy) cmd += fmt::format(" --policy {}", to_string(*cfg.limits.policy));
  if (cfg.limits.max_ranks != DrawLimits{}.max_ranks) cmd += fmt::format(" --max-ranks {}", cfg.limits.max_ranks);
  if (cfg.mutation != verify::Mutation::None) cmd += fmt::format(" --mutation {}", verify::to_string(cfg.mutation));
  return cmd;
}

std::string finding_line(const SeedResult& r, const SwarmConfig& cfg) {
  if (!r.finding) return fmt::format("seed {}: clean", r.seed);
  const Finding& f = *r.finding;
  return fmt::format("seed {}: {} at {}, connection {}: {} -- replay: {}", r.seed, to_string(f.kind),
                     format_duration(f.at), f.conn, f.detail, replay_command(r.seed, cfg));
}

}  // namespace railcheck::swarm
