// Sharing one rank's logged tuning with the communicator (logged_choices.hpp).
#include "engine/plan/logged_choices.hpp"

#include <algorithm>

namespace railcheck::plan {

bool same_operation(const CollTask& a, const CollTask& b) {
  return a.op == b.op && a.count == b.count && a.dtype == b.dtype && a.redop == b.redop;
}

std::size_t share_logged_choices(std::vector<RankStream>& ranks,
                                 const std::function<bool(std::uint32_t from, std::uint32_t to)>& same_inputs) {
  // Each rank's collectives in issue order: the k-th is the same collective on every rank.
  std::vector<std::vector<CollTask*>> colls(ranks.size());
  std::size_t longest = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (auto& g : ranks[r].groups)
      for (auto& c : g.colls) colls[r].push_back(&c);
    longest = std::max(longest, colls[r].size());
  }
  std::size_t shared = 0;
  for (std::size_t k = 0; k < longest; ++k) {
    const CollTask* source = nullptr;
    for (std::size_t r = 0; r < ranks.size() && !source; ++r)
      if (k < colls[r].size() && colls[r][k]->logged_by == static_cast<int>(ranks[r].rank)) source = colls[r][k];
    if (!source) continue;
    const auto from = static_cast<std::uint32_t>(source->logged_by);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (k >= colls[r].size()) continue;
      CollTask& c = *colls[r][k];
      if (c.logged_by >= 0 || !same_operation(c, *source) || !same_inputs(from, ranks[r].rank)) continue;
      c.algorithm = source->algorithm;
      c.protocol = source->protocol;
      c.logged_lo = source->logged_lo;
      c.logged_hi = source->logged_hi;
      c.logged_by = source->logged_by;
      ++shared;
    }
  }
  return shared;
}

}  // namespace railcheck::plan
