// railcheck swarm: many seeds on every core (swarm_pool), one seed replayed (--seed), one
// failing seed shrunk to a scenario file (--shrink). docs/swarm.md.
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "cli/commands.hpp"
#include "swarm/scenario_toml.hpp"
#include "swarm/swarm_pool.hpp"
#include "swarm/swarm_shrink.hpp"

namespace railcheck::cli {
namespace {

using swarm::SeedResult;

constexpr std::array<std::string_view, 5> kPhaseNames = {"idle", "draining", "await-probe-delay", "await-peer",
                                                         "failed"};
constexpr std::array<std::string_view, 5> kTriggerNames = {"error-completion", "soft-rto", "peer-notice",
                                                           "control-timeout", "rail-dead"};

// What the seeds so far covered, and how fast.
struct SwarmTally {
  std::uint64_t runs = 0;
  std::uint64_t findings = 0;
  std::uint64_t failed_cleanly = 0;
  std::array<std::uint64_t, swarm::kFaultKinds> enabled{};
  std::array<std::uint64_t, swarm::kFaultKinds> drawn{};
  std::array<std::uint64_t, 5> phases{};
  std::array<std::uint64_t, 5> triggers{};
  std::uint32_t largest = 0;
  double sim_seconds = 0;

  void add(const SeedResult& r) {
    ++runs;
    if (r.finding) ++findings;
    if (r.connection_failed) ++failed_cleanly;
    for (std::size_t k = 0; k < swarm::kFaultKinds; ++k) {
      enabled[k] += (r.enabled >> k) & 1U;
      drawn[k] += (r.drawn >> k) & 1U;
    }
    for (std::size_t i = 0; i < 5; ++i) {
      phases[i] += (r.phases >> i) & 1U;
      triggers[i] += (r.triggers >> i) & 1U;
    }
    largest = std::max(largest, r.ranks);
    sim_seconds += to_seconds(r.sim_end);
  }
};

std::string coverage_text(const SwarmTally& t) {
  std::string out = "fault kinds (seeds that drew one):";
  for (std::size_t k = 0; k < swarm::kFaultKinds; ++k)
    out += fmt::format(" {} {}", swarm::to_string(static_cast<swarm::FaultKind>(k)), t.drawn[k]);
  out += "\nfailover phases reached (seeds):";
  for (std::size_t i = 0; i < kPhaseNames.size(); ++i) out += fmt::format(" {} {}", kPhaseNames[i], t.phases[i]);
  out += "\nfailover triggers (seeds):";
  for (std::size_t i = 0; i < kTriggerNames.size(); ++i) out += fmt::format(" {} {}", kTriggerNames[i], t.triggers[i]);
  return out + "\n";
}

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

int run_many(const SwarmOptions& o, const swarm::SwarmConfig& cfg) {
  swarm::PoolPlan plan;
  const bool fresh = !o.first_seed;
  plan.first_seed = o.first_seed.value_or(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32));
  plan.seconds = o.seconds;
  plan.seeds = o.seeds ? o.seeds : o.seconds ? std::nullopt : std::optional<std::uint64_t>(1000);
  plan.jobs = o.jobs.value_or(std::max(1U, std::thread::hardware_concurrency()));
  plan.seeds_per_process = o.seeds_per_process.value_or(swarm::kSeedsPerProcess);
  fmt::print("swarm: first seed {}{}, {} worker(s), {}\n", plan.first_seed, fresh ? " (fresh)" : "", plan.jobs,
             plan.seeds ? fmt::format("{} seeds", *plan.seeds) : fmt::format("for {} s", *plan.seconds));
  std::fflush(stdout);

  SwarmTally t;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double last_progress = 0;
  auto ran = swarm::run_pool(
      plan, cfg,
      [&](const SeedResult& r) {
        t.add(r);
        if (r.finding) fmt::print("swarm: FINDING after {:.1f} s: {}\n", elapsed(), swarm::finding_line(r, cfg));
        std::fflush(stdout);
      },
      [&] {
        if (elapsed() - last_progress < 2) return;
        last_progress = elapsed();
        fmt::print(stderr, "swarm: {} seeds, {:.1f} seeds/s, {} finding(s), {} with a clean connection failure\n",
                   t.runs, static_cast<double>(t.runs) / last_progress, t.findings, t.failed_cleanly);
      });
  if (!ran) {
    fmt::print(stderr, "railcheck: {}\n", ran.error().message());
    return kExitBadInput;
  }
  const double wall = elapsed();
  fmt::print(
      "swarm: {} seeds from {} in {:.1f} s on {} worker(s): {:.1f} seeds/s; {} finding(s); {} seed(s) had a "
      "connection fail cleanly; largest world {} ranks; {:.0f} simulated s\n",
      t.runs, plan.first_seed, wall, plan.jobs, static_cast<double>(t.runs) / std::max(wall, 1e-9), t.findings,
      t.failed_cleanly, t.largest, t.sim_seconds);
  fmt::print("{}", coverage_text(t));
  if (t.findings > 0) {
    fmt::print(stderr, "railcheck: {} seed(s) found a violation; each FINDING line above replays it\n", t.findings);
    return kExitViolation;
  }
  return kExitOk;
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
  if (o.seed) return replay_one(*o.seed, cfg, o.out);
  if (o.shrink) return shrink_one(*o.shrink, cfg, o);
  return run_many(o, cfg);
}

}  // namespace railcheck::cli
