#include "swarm/swarm_tally.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace railcheck::swarm {
namespace {

constexpr std::array<std::string_view, kPhases> kPhaseNames = {"idle", "draining", "await-probe-delay", "await-peer",
                                                               "failed"};
constexpr std::array<std::string_view, kTriggers> kTriggerNames = {"error-completion", "soft-rto", "peer-notice",
                                                                   "control-timeout", "rail-dead"};

}  // namespace

void SwarmTally::add(const SeedResult& r, const SwarmConfig& cfg) {
  ++runs;
  if (r.finding) {
    ++findings;
    finding_lines.push_back(finding_line(r, cfg));
  }
  if (r.connection_failed) ++failed_cleanly;
  for (std::size_t k = 0; k < kFaultKinds; ++k) {
    enabled[k] += (r.enabled >> k) & 1U;
    drawn[k] += (r.drawn >> k) & 1U;
  }
  for (std::size_t i = 0; i < kPhases; ++i) phases[i] += (r.phases >> i) & 1U;
  for (std::size_t i = 0; i < kTriggers; ++i) triggers[i] += (r.triggers >> i) & 1U;
  largest = std::max(largest, r.ranks);
  sim_ns += static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.sim_end.count()));
  seeds.push_back(r.seed);
}

void SwarmTally::merge(const SwarmTally& other) {
  runs += other.runs;
  findings += other.findings;
  failed_cleanly += other.failed_cleanly;
  for (std::size_t k = 0; k < kFaultKinds; ++k) {
    enabled[k] += other.enabled[k];
    drawn[k] += other.drawn[k];
  }
  for (std::size_t i = 0; i < kPhases; ++i) phases[i] += other.phases[i];
  for (std::size_t i = 0; i < kTriggers; ++i) triggers[i] += other.triggers[i];
  largest = std::max(largest, other.largest);
  sim_ns += other.sim_ns;
  seeds.insert(seeds.end(), other.seeds.begin(), other.seeds.end());
  finding_lines.insert(finding_lines.end(), other.finding_lines.begin(), other.finding_lines.end());
}

std::vector<SeedRun> seed_runs(std::vector<std::uint64_t> seeds, std::uint64_t step) {
  std::sort(seeds.begin(), seeds.end());
  std::vector<SeedRun> out;
  for (const std::uint64_t s : seeds) {
    if (!out.empty() && out.back().first + out.back().count * step == s) {
      ++out.back().count;
      continue;
    }
    out.push_back(SeedRun{s, 1, step});
  }
  return out;
}

std::optional<std::uint64_t> repeated_seed(std::vector<std::uint64_t> seeds) {
  std::sort(seeds.begin(), seeds.end());
  const auto twice = std::adjacent_find(seeds.begin(), seeds.end());
  if (twice == seeds.end()) return std::nullopt;
  return *twice;
}

std::string seeds_text(std::vector<std::uint64_t> seeds) {
  if (seeds.empty()) return "none";
  std::sort(seeds.begin(), seeds.end());
  // Greedy arithmetic progressions: where --for cut the lanes, one rank's part runs on past the
  // others' as every n-th seed, which "a..b step n" names in one piece.
  std::string out;
  for (std::size_t i = 0; i < seeds.size();) {
    std::size_t j = i + 1;
    const std::uint64_t step = j < seeds.size() ? seeds[j] - seeds[i] : 0;
    while (step > 0 && j < seeds.size() && seeds[j] - seeds[j - 1] == step) ++j;
    if (!out.empty()) out += ", ";
    if (step == 1 || (step > 1 && j - i >= 3)) {
      out += fmt::format("{}..{}", seeds[i], seeds[j - 1]);
      if (step > 1) out += fmt::format(" step {}", step);
      i = j;
    } else {
      out += fmt::format("{}", seeds[i]);
      ++i;
    }
  }
  return out;
}

std::string coverage_text(const SwarmTally& t) {
  std::string out = "fault kinds (seeds that drew one):";
  for (std::size_t k = 0; k < kFaultKinds; ++k)
    out += fmt::format(" {} {}", to_string(static_cast<FaultKind>(k)), t.drawn[k]);
  out += "\nfailover phases reached (seeds):";
  for (std::size_t i = 0; i < kPhases; ++i) out += fmt::format(" {} {}", kPhaseNames[i], t.phases[i]);
  out += "\nfailover triggers (seeds):";
  for (std::size_t i = 0; i < kTriggers; ++i) out += fmt::format(" {} {}", kTriggerNames[i], t.triggers[i]);
  return out + "\n";
}

}  // namespace railcheck::swarm
