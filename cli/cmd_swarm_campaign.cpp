// A swarm campaign: many seeds on every local core, and under mpirun on every rank of every
// machine. Rank r of n runs seeds first + r + k*n (k = 0, 1, ...) with its own -j workers, so
// the ranks' parts are disjoint by construction and --seeds N (the total) leaves no seed out;
// with --for each rank runs its part until the time is up. Then every rank all-gathers every
// rank's report (swarm/swarm_rank_report.hpp) and computes the same verdict from it, so all exit
// alike and none waits on a rank that failed; rank 0 alone prints: its own FINDING lines as they
// come, the other ranks' after the gather, and one summary naming exactly the seeds that ran.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "backends/sim/sweep/mpi_sweep.hpp"
#include "cli/mpi_ranks.hpp"
#include "cli/swarm_campaign.hpp"
#include "swarm/swarm_pool.hpp"
#include "swarm/swarm_rank_report.hpp"
#include "swarm/swarm_tally.hpp"

namespace railcheck::cli {
namespace {

using swarm::SeedResult;

// Where this process stands among the campaign's ranks (one rank without mpirun).
struct RankPlace {
  std::unique_ptr<verify::RankExchange> exchange;  // null without mpirun
  std::uint64_t rank = 0;
  std::uint64_t ranks = 1;
  bool speaker() const { return rank == 0; }
};

// Rank r's share of `total` seeds taken every n-th from the first: ceil((total - r) / n).
std::uint64_t share_of(std::uint64_t total, const RankPlace& at) {
  return total / at.ranks + (at.rank < total % at.ranks ? 1 : 0);
}

std::string header(const swarm::PoolPlan& plan, std::uint64_t first, bool fresh, const RankPlace& at,
                   const std::optional<std::uint64_t>& total) {
  const std::string amount = total ? fmt::format("{} seeds", *total) : fmt::format("for {} s", *plan.seconds);
  if (!at.exchange)
    return fmt::format("swarm: first seed {}{}, {} worker(s), {}\n", first, fresh ? " (fresh)" : "", plan.jobs, amount);
  return fmt::format(
      "swarm: first seed {}{}, {} ranks under mpirun (rank r runs seeds {} + r + k*{}), {} worker(s) on "
      "rank 0, {}\n",
      first, fresh ? " (fresh)" : "", at.ranks, first, at.ranks, plan.jobs, amount);
}

// The postcondition of the split: every seed ran once, and without --for exactly first ..
// first + total - 1. A miss is our bug (the pool or the split), not a finding.
std::optional<std::string> split_error(const swarm::SwarmTally& t, std::uint64_t first,
                                       const std::optional<std::uint64_t>& total, bool timed) {
  if (auto twice = swarm::repeated_seed(t.seeds))
    return fmt::format("seed {} ran twice (the split is wrong: an internal error)", *twice);
  if (!total || timed || *total == 0) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(t.seeds.begin(), t.seeds.end());
  if (t.runs == *total && t.seeds.size() == *total && *lo == first && *hi == first + *total - 1) return std::nullopt;
  return fmt::format("the campaign ran {} seeds ({}), not the {} of {}..{} (an internal error)", t.runs,
                     swarm::seeds_text(t.seeds), *total, first, first + *total - 1);
}

// What every rank computes alike from the gathered reports: the merged tally, or the ranks'
// errors.
struct Merged {
  swarm::SwarmTally tally;
  std::uint64_t workers = 0;
  std::vector<std::string> errors;          // "rank 1: ..."
  std::vector<std::string> others_finding;  // "swarm: FINDING on rank 1: ...", ranks 1.. in order
};

Merged merge_reports(const std::vector<std::vector<std::uint64_t>>& by_rank) {
  Merged m;
  for (std::size_t r = 0; r < by_rank.size(); ++r) {
    auto report = swarm::decode_report(by_rank[r]);
    if (!report) {
      m.errors.push_back(fmt::format("rank {}: {}", r, report.error().message()));
      continue;
    }
    if (report->error) m.errors.push_back(fmt::format("rank {}: {}", r, *report->error));
    if (r > 0)
      for (const std::string& line : report->tally.finding_lines)
        m.others_finding.push_back(fmt::format("swarm: FINDING on rank {}: {}\n", r, line));
    m.tally.merge(report->tally);
    m.workers += report->jobs;
  }
  return m;
}

int summarize(const swarm::SwarmTally& t, std::uint64_t first, double wall, const std::string& where) {
  fmt::print(
      "swarm: {} seeds from {} in {:.1f} s on {}: {:.1f} seeds/s; {} finding(s); {} seed(s) had a connection fail "
      "cleanly; largest world {} ranks; {:.0f} simulated s\n",
      t.runs, first, wall, where, static_cast<double>(t.runs) / std::max(wall, 1e-9), t.findings, t.failed_cleanly,
      t.largest, static_cast<double>(t.sim_ns) * 1e-9);
  fmt::print("seeds run: {}\n", swarm::seeds_text(t.seeds));
  fmt::print("{}", swarm::coverage_text(t));
  if (t.findings > 0) {
    fmt::print(stderr, "railcheck: {} seed(s) found a violation; each FINDING line above replays it\n", t.findings);
    return kExitViolation;
  }
  return kExitOk;
}

}  // namespace

int run_swarm_campaign(const SwarmOptions& o, const swarm::SwarmConfig& cfg) {
  RankPlace at;
  if (sweep::started_by_mpirun()) {
    auto opened = open_mpi_ranks();
    if (!opened) {
      fmt::print(stderr, "railcheck: {}\n", opened.error().message());
      return kExitBadInput;
    }
    at.exchange = std::move(opened.value());
    at.rank = static_cast<std::uint64_t>(at.exchange->rank());
    at.ranks = static_cast<std::uint64_t>(at.exchange->ranks());
  }
  const bool fresh = !o.first_seed;
  std::uint64_t first = o.first_seed.value_or(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32));
  // Every rank must split the same range: rank 0's fresh seed is everyone's.
  if (at.exchange) first = at.exchange->all_gather({first})[0][0];
  const std::optional<std::uint64_t> total = o.seeds     ? o.seeds
                                             : o.seconds ? std::nullopt
                                                         : std::optional<std::uint64_t>(1000);

  swarm::PoolPlan plan;
  plan.first_seed = first + at.rank;
  plan.stride = at.ranks;
  plan.seconds = o.seconds;
  if (total) plan.seeds = share_of(*total, at);
  plan.jobs = o.jobs.value_or(sweep::cores_per_rank());
  plan.seeds_per_process = o.seeds_per_process.value_or(swarm::kSeedsPerProcess);
  if (at.speaker()) fmt::print("{}", header(plan, first, fresh, at, total));
  std::fflush(stdout);

  swarm::SwarmTally t;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double last_progress = 0;
  const std::string part = at.exchange ? fmt::format(" (rank 0's part, 1/{} of the seeds)", at.ranks) : "";
  auto ran = swarm::run_pool(
      plan, cfg,
      [&](const SeedResult& r) {
        t.add(r, cfg);
        if (r.finding && at.speaker())
          fmt::print("swarm: FINDING after {:.1f} s: {}\n", elapsed(), t.finding_lines.back());
        std::fflush(stdout);
      },
      [&] {
        if (!at.speaker() || elapsed() - last_progress < 2) return;
        last_progress = elapsed();
        fmt::print(stderr, "swarm: {} seeds, {:.1f} seeds/s, {} finding(s), {} with a clean connection failure{}\n",
                   t.runs, static_cast<double>(t.runs) / last_progress, t.findings, t.failed_cleanly, part);
      });

  if (!at.exchange) {
    if (!ran) {
      fmt::print(stderr, "railcheck: {}\n", ran.error().message());
      return kExitBadInput;
    }
    if (auto broken = split_error(t, first, total, o.seconds.has_value())) {
      fmt::print(stderr, "railcheck: {}\n", *broken);
      return kExitInternal;
    }
    return summarize(t, first, elapsed(), fmt::format("{} worker(s)", plan.jobs));
  }

  swarm::RankReport mine;
  mine.tally = std::move(t);
  mine.jobs = plan.jobs;
  mine.wall_us = static_cast<std::uint64_t>(elapsed() * 1e6);
  if (!ran) mine.error = ran.error().message();
  const Merged m = merge_reports(at.exchange->all_gather(swarm::encode_report(mine, at.ranks)));
  const double wall = elapsed();  // the slowest rank's part: the gather waited for it
  if (!m.errors.empty()) {
    if (at.speaker())
      for (const std::string& e : m.errors) fmt::print(stderr, "railcheck: {}\n", e);
    return kExitBadInput;
  }
  if (auto broken = split_error(m.tally, first, total, o.seconds.has_value())) {
    if (at.speaker()) fmt::print(stderr, "railcheck: {}\n", *broken);
    return kExitInternal;
  }
  if (!at.speaker()) return m.tally.findings > 0 ? kExitViolation : kExitOk;
  // Rank 0 printed its own findings as they came; the others' come now, in rank order.
  for (const std::string& line : m.others_finding) fmt::print("{}", line);
  return summarize(m.tally, first, wall, fmt::format("{} ranks ({} workers)", at.ranks, m.workers));
}

}  // namespace railcheck::cli
