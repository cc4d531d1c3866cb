#include "engine/routing/moe_tables.hpp"

#include <algorithm>

#include "engine/core/engine_assert.hpp"

namespace railcheck::routing {
namespace {

// Token counts per (stage, from, to); the fabric follows from the nodes of `from` and `to`.
class MessageCounts {
 public:
  explicit MessageCounts(const MoeCluster& c) : c_(c), counts_(2 * static_cast<std::size_t>(c.ranks) * c.ranks, 0) {}
  void add(std::uint8_t stage, std::uint32_t from, std::uint32_t to) {
    ++counts_[(static_cast<std::size_t>(stage) * c_.ranks + from) * c_.ranks + to];
  }
  MoePhase phase() const {
    MoePhase p;
    for (std::uint8_t stage = 0; stage < 2; ++stage)
      for (std::uint32_t from = 0; from < c_.ranks; ++from)
        for (std::uint32_t to = 0; to < c_.ranks; ++to) {
          const std::uint64_t n = counts_[(static_cast<std::size_t>(stage) * c_.ranks + from) * c_.ranks + to];
          if (n == 0) continue;
          const Fabric via = c_.node_of(from) == c_.node_of(to) ? Fabric::Nvlink : Fabric::Rdma;
          p.messages.push_back({from, to, via, stage, n});
          (via == Fabric::Rdma ? p.rdma_tokens : p.nvlink_tokens) += n;
        }
    return p;
  }

 private:
  const MoeCluster& c_;
  std::vector<std::uint64_t> counts_;
};

// The rank on `node` that receives (dispatch) or sends (combine) the node's one RDMA copy for
// a token of `src`: the GPU with src's local index, so the copy stays on one rail.
std::uint32_t rail_peer(const MoeCluster& c, std::uint32_t node, std::uint32_t src) {
  const std::uint32_t first = node * c.gpus_per_node;
  const std::uint32_t size = std::min(c.gpus_per_node, c.ranks - first);
  RAILCHECK_ASSERT(first < c.ranks && size > 0, "a node that receives a token has a GPU");
  return first + (src % c.gpus_per_node) % size;
}

}  // namespace

std::string_view to_string(MoeScheme s) { return s == MoeScheme::Flat ? "flat" : "hierarchical"; }

MoeTables build_moe_tables(const TokenAssignment& a, const MoeCluster& cluster, MoeScheme scheme) {
  MessageCounts dispatch(cluster);
  MessageCounts combine(cluster);
  if (!RAILCHECK_ASSERT(a.experts.size() == static_cast<std::size_t>(cluster.ranks) * a.tokens_per_rank * a.top_k,
                        "the assignment was drawn for this cluster"))
    return {scheme, {}, {}};
  std::vector<std::uint32_t> dest;
  for (std::uint32_t s = 0; s < cluster.ranks; ++s) {
    for (std::uint32_t t = 0; t < a.tokens_per_rank; ++t) {
      const std::uint32_t* experts = a.of(s, t);
      dest.clear();
      for (std::uint32_t j = 0; j < a.top_k; ++j) dest.push_back(cluster.rank_of_expert(experts[j]));
      std::sort(dest.begin(), dest.end());
      dest.erase(std::unique(dest.begin(), dest.end()), dest.end());
      // Ranks are sorted, so a node's ranks are adjacent: one RDMA copy per run of a remote node.
      std::uint32_t last_node = UINT32_MAX;
      for (std::uint32_t d : dest) {
        const std::uint32_t node = cluster.node_of(d);
        const bool remote = node != cluster.node_of(s);
        if (scheme == MoeScheme::Flat || !remote) {
          if (d == s) continue;
          dispatch.add(0, s, d);
          combine.add(0, d, s);
          continue;
        }
        const std::uint32_t peer = rail_peer(cluster, node, s);
        if (node != last_node) {
          dispatch.add(0, s, peer);
          combine.add(1, peer, s);
          last_node = node;
        }
        if (d != peer) {
          dispatch.add(1, peer, d);
          combine.add(0, d, peer);
        }
      }
    }
  }
  return {scheme, dispatch.phase(), combine.phase()};
}

}  // namespace railcheck::routing
