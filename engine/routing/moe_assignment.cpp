#include "engine/routing/moe_assignment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "engine/core/engine_assert.hpp"

namespace railcheck::routing {
namespace {

// The first `k` of `pool` after a partial Fisher-Yates shuffle.
void pick(std::vector<std::uint32_t>& pool, std::size_t k, SeededRng& rng) {
  RAILCHECK_ASSERT(k <= pool.size(), "top-k picks from a pool of k at least (checked against the config)");
  for (std::size_t i = 0; i < k; ++i) std::swap(pool[i], pool[i + rng.below(pool.size() - i)]);
}

}  // namespace

Result<TokenAssignment> draw_token_assignment(const ModelConfig& c, const MoeCluster& cluster,
                                              std::uint32_t tokens_per_rank, SeededRng& rng) {
  if (c.experts == 0) return Error{fmt::format("{} has no routed experts", c.name), ""};
  if (cluster.ranks == 0 || cluster.gpus_per_node == 0)
    return Error{"moe ranks and gpus_per_node must be positive", ""};
  if (cluster.experts != c.experts || cluster.experts % cluster.ranks != 0)
    return Error{fmt::format("{} experts do not spread evenly over {} ranks", c.experts, cluster.ranks),
                 "pick a rank count that divides the expert count"};
  const std::uint64_t per_group = c.experts / c.n_group;
  if (per_group * c.topk_group < c.experts_per_token)
    return Error{fmt::format("{}: {} groups of {} experts cannot supply top-{}", c.name, c.topk_group, per_group,
                             c.experts_per_token),
                 ""};
  TokenAssignment a;
  a.tokens_per_rank = tokens_per_rank;
  a.top_k = static_cast<std::uint32_t>(c.experts_per_token);
  a.experts.reserve(static_cast<std::size_t>(cluster.ranks) * tokens_per_rank * a.top_k);
  std::vector<std::uint32_t> groups(c.n_group);
  std::vector<std::uint32_t> pool;
  for (std::size_t t = 0; t < static_cast<std::size_t>(cluster.ranks) * tokens_per_rank; ++t) {
    std::iota(groups.begin(), groups.end(), 0u);
    pick(groups, c.topk_group, rng);
    pool.clear();
    for (std::uint64_t g = 0; g < c.topk_group; ++g)
      for (std::uint64_t x = 0; x < per_group; ++x)
        pool.push_back(static_cast<std::uint32_t>(groups[g] * per_group + x));
    pick(pool, a.top_k, rng);
    a.experts.insert(a.experts.end(), pool.begin(), pool.begin() + a.top_k);
  }
  RAILCHECK_ASSERT(a.experts.size() == static_cast<std::size_t>(cluster.ranks) * tokens_per_rank * a.top_k,
                   "every token of every rank has its top-k experts");
  return a;
}

}  // namespace railcheck::routing
