// BipartiteSharing (backends/sim/routing/bipartite_sharing.hpp) against SimGrid's saturation loop
// written the plain way (every round, the least remaining / open over every open link), on random
// bipartite worlds (1 to 19 links a side, the sides of different sizes) whose flows join and
// leave between solves as a MoE phase's do: the levels agree within rounding, and the pairs
// solve() reports as changed are exactly those whose bottleneck changed, so a caller that moves
// only those always holds every flow on its bottleneck; across the renumbering of lanes every 64
// solves.
#include "backends/sim/routing/bipartite_sharing.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "engine/core/rng.hpp"

using namespace railcheck;

namespace {

// The plain saturation loop: the level each link fixes its open flows at (0 if it fixes none);
// the up links first, then the down links.
std::vector<double> plain_levels(std::uint32_t ups, std::uint32_t downs, double bound,
                                 const std::map<std::pair<std::uint32_t, std::uint32_t>, int>& pairs) {
  std::vector<double> remaining(ups + downs, bound), open(ups + downs, 0), level(ups + downs, 0);
  std::vector<bool> done(ups + downs, false);
  for (const auto& [p, n] : pairs) open[p.first] += n, open[ups + p.second] += n;
  std::map<std::pair<std::uint32_t, std::uint32_t>, bool> fixed;
  for (;;) {
    double least = -1;
    std::uint32_t at = 0;
    for (std::uint32_t l = 0; l < ups + downs; ++l)
      if (!done[l] && open[l] > 0 && (least < 0 || remaining[l] / open[l] < least))
        least = remaining[l] / open[l], at = l;
    if (least < 0) break;
    done[at] = true;
    level[at] = least;
    for (const auto& [p, n] : pairs) {
      if (fixed[p] || (p.first != at && ups + p.second != at)) continue;
      fixed[p] = true;
      for (const std::uint32_t l : {p.first, ups + p.second}) remaining[l] -= least * n, open[l] -= n;
    }
  }
  return level;
}

}  // namespace

TEST_CASE("bipartite sharing: the saturation loop's levels, and every changed bottleneck reported",
          "[sim][routing][moe]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SeededRng rng(seed);
    const std::uint32_t ups = 1 + static_cast<std::uint32_t>(rng.below(19)),
                        downs = 1 + static_cast<std::uint32_t>(rng.below(19));
    const double bound = 1e9 * (1 + rng.unit());
    sim::BipartiteSharing sharing(ups, downs, bound);
    std::map<std::pair<std::uint32_t, std::uint32_t>, int> pairs;
    std::map<std::pair<std::uint32_t, std::uint32_t>, bool> by_up;  // the caller's view: pairs solved so far
    for (int round = 0; round < 140; ++round) {                     // past two renumberings of the lanes
      // A few flows join (sometimes onto a pair that has some), a few leave.
      for (std::uint64_t k = rng.below(1 + ups * downs / 2); k > 0; --k) {
        const std::uint32_t u = static_cast<std::uint32_t>(rng.below(ups)),
                            d = static_cast<std::uint32_t>(rng.below(downs));
        sharing.add(u, d);
        ++pairs[{u, d}];
      }
      for (std::uint64_t k = rng.below(1 + std::max(ups, downs)); k > 0 && !pairs.empty(); --k) {
        auto it = pairs.begin();
        std::advance(it, static_cast<long>(rng.below(pairs.size())));
        sharing.remove(it->first.first, it->first.second);
        if (--it->second == 0) by_up.erase(it->first), pairs.erase(it);
      }
      sharing.solve([&](std::uint32_t u, std::uint32_t d) {
        const auto it = by_up.find({u, d});
        if (it != by_up.end()) it->second = !it->second;
      });
      INFO("seed " << seed << ", round " << round << ", " << ups << " up and " << downs << " down links");
      const std::vector<double> plain = plain_levels(ups, downs, bound, pairs);
      for (std::uint32_t l = 0; l < ups + downs; ++l) {
        const double got = sharing.level(l < ups, l < ups ? l : l - ups);
        INFO("link " << l << ": " << got << " against " << plain[l]);
        // A link that ties with another may fix its flows or leave them to it; either way the
        // flows' rates are the same, so compare where both fixed some.
        if (got > 0 && plain[l] > 0) CHECK(std::fabs(got - plain[l]) <= 1e-12 * plain[l]);
      }
      for (const auto& [p, n] : pairs) {
        const bool up = sharing.fixed_by_up(p.first, p.second);
        const double rate = sharing.level(up, up ? p.first : p.second);
        const double plain_rate = std::min(plain[p.first] > 0 ? plain[p.first] : INFINITY,
                                           plain[ups + p.second] > 0 ? plain[ups + p.second] : INFINITY);
        INFO("pair " << p.first << " -> " << p.second);
        CHECK(std::fabs(rate - plain_rate) <= 1e-12 * plain_rate);
        const auto [it, fresh] = by_up.try_emplace(p, up);
        if (!fresh) CHECK(it->second == up);  // moved exactly when its bottleneck changed
      }
    }
  }
}
