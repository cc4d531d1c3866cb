#pragma once
// What a swarm campaign ran and covered: the counters of its summary, every seed that ran, and
// every finding's line. One process fills one from its pool's results; under mpirun every
// rank fills its own and the ranks' tallies are merged (swarm_rank_report.hpp carries them).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "swarm/swarm_run.hpp"

namespace railcheck::swarm {

constexpr std::size_t kPhases = 5;    // FailoverPhase values
constexpr std::size_t kTriggers = 5;  // FailoverTrigger values

// Seeds first, first + step, ..., first + (count - 1) * step.
struct SeedRun {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  std::uint64_t step = 1;
};

struct SwarmTally {
  std::uint64_t runs = 0;
  std::uint64_t findings = 0;
  std::uint64_t failed_cleanly = 0;
  std::array<std::uint64_t, kFaultKinds> enabled{};
  std::array<std::uint64_t, kFaultKinds> drawn{};
  std::array<std::uint64_t, kPhases> phases{};
  std::array<std::uint64_t, kTriggers> triggers{};
  std::uint32_t largest = 0;
  std::uint64_t sim_ns = 0;                // simulated time, summed over the seeds
  std::vector<std::uint64_t> seeds;        // every seed that ran, in the order they finished
  std::vector<std::string> finding_lines;  // swarm::finding_line of each finding, in that order

  void add(const SeedResult& r, const SwarmConfig& cfg);
  // Sums `other` into this one: the seeds and findings of both.
  void merge(const SwarmTally& other);
};

// The seeds, sorted, as runs of `step` (the seeds one rank ran under mpirun are every n-th).
std::vector<SeedRun> seed_runs(std::vector<std::uint64_t> seeds, std::uint64_t step);
// A seed that ran more than once, if any: the ranks' parts must not overlap.
std::optional<std::uint64_t> repeated_seed(std::vector<std::uint64_t> seeds);
// Exactly the seeds that ran, ascending: "1..1000", "1..40, 42, 45..47", "1..268, 270..368 step 2".
std::string seeds_text(std::vector<std::uint64_t> seeds);
// The coverage lines of the summary: fault kinds drawn, failover phases and triggers reached.
std::string coverage_text(const SwarmTally& t);

}  // namespace railcheck::swarm
