// railcheck swarm: many seeds on every core and every mpirun rank (cmd_swarm_campaign.cpp), one
// seed replayed (--seed), one failing seed shrunk to a scenario file (--shrink). docs/swarm.md.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "backends/sim/sweep/mpi_sweep.hpp"
#include "cli/commands.hpp"
#include "cli/swarm_campaign.hpp"
#include "swarm/scenario_toml.hpp"
#include "swarm/swarm_shrink.hpp"

namespace railcheck::cli {
namespace {

using swarm::SeedResult;

std::string world_text(const Scenario& sc) {
  const Topology& t = sc.topology;
  const Workload& w = sc.workload;
  const FaultProfile& f = sc.faults;
  return fmt::format(
      "world      {} ranks x {} rails, {} path(s), {}; {} {} x {} B, window {}, {} channel(s), recv_group {}\n"
      "engine     replay {}, qp timeout {} retry {} rnr {}, soft RTO {}, liveness {}\n"
      "faults     {} down, {} flap, {} jitter, {} one-way loss, {} incast, {} stall, {} slow rank(s); bound {}\n",
      t.ranks, t.rails, t.paths_per_conn, t.nic.name,
      w.pattern == TrafficPattern::Bidirectional ? "bidirectional" : "unidirectional", w.messages, w.message_bytes,
      w.window, w.channels, w.recv_group, to_string(sc.engine.replay), sc.engine.qp.timeout, sc.engine.qp.retry_cnt,
      sc.engine.qp.rnr_retry, format_duration(sc.engine.initial_soft_rto()), sc.engine.liveness ? "on" : "off",
      f.downs.size(), f.flaps.size(), f.jitters.size(), f.losses.size(), f.incasts.size(), f.stalls.size(),
      w.slow_ranks.size(), format_duration(sc.time_limit));
}

int write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f || !(f << text) || !f.flush()) {
    fmt::print(stderr, "railcheck: cannot write {}\n", path);
    return kExitBadInput;
  }
  return kExitOk;
}

int replay_one(std::uint64_t seed, const swarm::SwarmConfig& cfg, const std::string& out) {
  const swarm::DrawnWorld w = swarm::draw_world(seed, cfg.limits);
  fmt::print("{}", world_text(w.scenario));
  const SeedResult r = swarm::run_checked(w.scenario, seed, cfg.mutation);
  fmt::print("verdict    {}\n", swarm::finding_line(r, cfg));
  fmt::print("trace      {} engine batches, digest {:016x}, sim time {}, wall {:.3f} s\n", r.batches, r.digest,
             format_duration(r.sim_end), r.wall_s);
  if (!out.empty()) {
    const int rc = write_file(out, swarm::scenario_toml(w.scenario, fmt::format("The world of swarm seed {}.", seed)));
    if (rc != kExitOk) return rc;
    fmt::print("scenario   {} (railcheck run {})\n", out, out);
  }
  return r.finding ? kExitViolation : kExitOk;
}

int shrink_one(std::uint64_t seed, const swarm::SwarmConfig& cfg, const SwarmOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto shrunk = swarm::shrink_seed(seed, cfg, o.shrink_runs, [](const std::string& step, const Scenario& sc) {
    fmt::print(stderr, "shrink: {} ({} ranks, {} rails, {} messages, {} fault entries)\n", step, sc.topology.ranks,
               sc.topology.rails, sc.workload.messages,
               sc.faults.downs.size() + sc.faults.flaps.size() + sc.faults.jitters.size() + sc.faults.losses.size() +
                   sc.faults.incasts.size() + sc.faults.stalls.size());
  });
  if (!shrunk) {
    fmt::print(stderr, "railcheck: {}\n", shrunk.error().message());
    return kExitBadInput;
  }
  const std::string path = o.out.empty() ? fmt::format("swarm-{}.toml", seed) : o.out;
  Scenario sc = shrunk->scenario;
  sc.name = std::filesystem::path(path).stem().string();  // scenarios/ wants a file named after its scenario
  sc.description = fmt::format("swarm seed {}, shrunk: {}", seed, swarm::to_string(shrunk->result.finding->kind));
  std::string note = fmt::format(
      "Shrunk by `railcheck swarm --shrink {}` from `{}` in {} runs ({} reductions kept).\nFinding: {}\n"
      "Replay: railcheck run {}",
      seed, swarm::replay_command(seed, cfg), shrunk->runs, shrunk->accepted, swarm::finding_line(shrunk->result, cfg),
      path);
  if (cfg.mutation != verify::Mutation::None)
    note += fmt::format("\n(the finding needs the engine mutation {}, which railcheck run does not apply)",
                        verify::to_string(cfg.mutation));
  if (const int rc = write_file(path, swarm::scenario_toml(sc, note)); rc != kExitOk) return rc;
  fmt::print("{}", world_text(sc));
  fmt::print("shrunk     seed {} in {} runs ({:.1f} s): {}\nscenario   {}\n", seed, shrunk->runs,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
             swarm::finding_line(shrunk->result, cfg), path);
  return kExitViolation;
}

}  // namespace

int cmd_swarm(const SwarmOptions& o) {
  swarm::SwarmConfig cfg;
  cfg.limits.max_ranks = o.max_ranks;
  if (!o.policy.empty()) {
    auto p = parse_replay_policy(o.policy);
    if (!p) {
      fmt::print(stderr, "railcheck: --policy {}: expected naive, probe or resync\n", o.policy);
      return kExitBadInput;
    }
    cfg.limits.policy = *p;
  }
  if (!o.mutation.empty()) {
    auto m = verify::parse_mutation(o.mutation);
    if (!m) {
      fmt::print(stderr, "railcheck: --mutation {}: expected one of {}\n", o.mutation, verify::mutation_names());
      return kExitBadInput;
    }
    cfg.mutation = *m;
  }
  if (o.seed && o.shrink) {
    fmt::print(stderr, "railcheck: --seed replays a seed and --shrink shrinks one: give one of them\n");
    return kExitBadInput;
  }
  // Checked before MPI starts, alike on every rank: each exits at once and none waits for another.
  if ((o.seed || o.shrink) && sweep::started_by_mpirun()) {
    fmt::print(stderr, "railcheck: {} works on one seed in one process: run it without mpirun\n",
               o.seed ? "--seed" : "--shrink");
    return kExitBadInput;
  }
  if (o.seed) return replay_one(*o.seed, cfg, o.out);
  if (o.shrink) return shrink_one(*o.shrink, cfg, o);
  return run_swarm_campaign(o, cfg);
}

}  // namespace railcheck::cli
