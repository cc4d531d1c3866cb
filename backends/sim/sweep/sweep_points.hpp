#pragma once
// Expanding a sweep into points, choosing a shard of them, and writing each point's scenario.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/sim/sweep/sweep_spec.hpp"

namespace railcheck::sweep {

struct SweepPoint {
  std::size_t index = 0;  // position in the full expansion (the last axis varies fastest, seeds last)
  std::vector<std::pair<std::string, std::string>> params;  // (axis key, formatted value)
  std::vector<const toml::node*> values;                    // the axis values, into the spec
  std::uint64_t seed = 0;
  std::string id;  // "engine.rto_ms=100,faults.link_down[0].until_ms=60,seed=1": stable across runs
};

// Every point, in a fixed order, for a spec with no axes one point per seed.
std::vector<SweepPoint> expand(const SweepSpec& spec);

// Shard K of N (0 <= K < N) keeps the points whose index is K modulo N: every point lands in
// exactly one shard whatever N is, and a shard's share is balanced across the axes.
struct Shard {
  std::uint32_t k = 0;
  std::uint32_t n = 1;
};
Result<Shard> parse_shard(std::string_view text);  // "K/N"
std::vector<SweepPoint> take_shard(std::vector<SweepPoint> points, Shard s);

// The base scenario with the point's values put at their keys, as TOML text that names the
// point. A key through a missing table creates it; an array index past the end is an error.
Result<std::string> point_scenario(const SweepSpec& spec, const SweepPoint& p);

}  // namespace railcheck::sweep
