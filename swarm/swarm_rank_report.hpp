#pragma once
// What one rank of `mpirun -np N railcheck swarm` tells the others when its part is done: its
// tally (counters, the seeds it ran, its findings' lines), its workers and wall time, or why it
// could not run. MPI moves arrays of 64-bit words (verify::RankExchange::all_gather), so the
// report is a versioned codec over them: counters as words, the seeds as runs of the rank's
// stride (a rank runs every n-th seed: a few words for a whole part), text as its length and
// its bytes eight to a word, little-endian. decode() checks every length against what is left.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "swarm/swarm_tally.hpp"

namespace railcheck::swarm {

struct RankReport {
  SwarmTally tally;
  std::uint64_t jobs = 0;            // worker processes this rank ran
  std::uint64_t wall_us = 0;         // this rank's pool, start to end
  std::optional<std::string> error;  // set: the rank ran nothing, and this is why
};

// `stride`: the step between the rank's seeds (the number of ranks), so its part encodes as one
// run, or a few where --for cut its lanes at different seeds.
std::vector<std::uint64_t> encode_report(const RankReport& r, std::uint64_t stride);
Result<RankReport> decode_report(std::span<const std::uint64_t> words);

}  // namespace railcheck::swarm
