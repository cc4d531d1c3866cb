#include "engine/routing/moe_tables.hpp"

#include <catch2/catch.hpp>
#include <set>

using namespace railcheck;
using namespace railcheck::routing;

namespace {

std::uint64_t token_copies(const MoePhase& p) { return p.rdma_tokens + p.nvlink_tokens; }

}  // namespace

TEST_CASE("hierarchical MoE never sends more RDMA tokens than flat", "[routing][moe]") {
  const ModelConfig c = *find_model_config("deepseek-v3");
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (std::uint32_t ranks : {8u, 32u, 64u}) {
      INFO("seed " << seed << " ranks " << ranks);
      const MoeCluster cluster{ranks, 8, static_cast<std::uint32_t>(c.experts)};
      SeededRng rng(seed);
      auto a = draw_token_assignment(c, cluster, 64, rng);
      REQUIRE(a.ok());
      const auto flat = build_moe_tables(a.value(), cluster, MoeScheme::Flat);
      const auto hier = build_moe_tables(a.value(), cluster, MoeScheme::Hierarchical);
      CHECK(hier.dispatch.rdma_tokens <= flat.dispatch.rdma_tokens);
      CHECK(hier.combine.rdma_tokens <= flat.combine.rdma_tokens);
      // Combine mirrors dispatch, token for token.
      CHECK(token_copies(flat.combine) == token_copies(flat.dispatch));
      CHECK(token_copies(hier.combine) == token_copies(hier.dispatch));
      if (ranks == 8) CHECK(flat.dispatch.rdma_tokens == 0);
      if (ranks == 64) CHECK(hier.dispatch.rdma_tokens < flat.dispatch.rdma_tokens);
    }
  }
}

TEST_CASE("one token, experts on three ranks of one remote node: flat 3 RDMA copies, hierarchical 1",
          "[routing][moe]") {
  const MoeCluster cluster{16, 8, 16};  // expert x on rank x
  TokenAssignment a{1, 3, {}};
  a.experts.assign(16 * 3, 0);
  // Rank 1's token goes to experts 9, 10, 12 (ranks 9, 10, 12 on node 1); other tokens stay home.
  for (std::uint32_t r = 0; r < 16; ++r)
    for (std::uint32_t j = 0; j < 3; ++j) a.experts[r * 3 + j] = r;
  a.experts[3] = 9;
  a.experts[4] = 10;
  a.experts[5] = 12;
  const auto flat = build_moe_tables(a, cluster, MoeScheme::Flat);
  const auto hier = build_moe_tables(a, cluster, MoeScheme::Hierarchical);
  CHECK(flat.dispatch.rdma_tokens == 3);
  CHECK(hier.dispatch.rdma_tokens == 1);
  // The copy lands on rank 9 (rank 1's rail peer) and is forwarded to 10 and 12 over NVLink.
  REQUIRE(hier.dispatch.messages.size() == 3);
  CHECK(hier.dispatch.messages[0].to == 9);
  CHECK(hier.dispatch.messages[1].stage == 1);
  CHECK(hier.dispatch.nvlink_tokens == 2);
  CHECK(hier.combine.rdma_tokens == 1);
}

TEST_CASE("group-limited routing keeps each token within topk_group groups", "[routing][moe]") {
  const ModelConfig c = *find_model_config("deepseek-v3");
  const MoeCluster cluster{64, 8, 256};
  SeededRng rng(7);
  auto a = draw_token_assignment(c, cluster, 32, rng);
  REQUIRE(a.ok());
  for (std::uint32_t r = 0; r < 64; ++r)
    for (std::uint32_t t = 0; t < 32; ++t) {
      std::set<std::uint32_t> groups, experts;
      for (std::uint32_t j = 0; j < 8; ++j) {
        groups.insert(a->of(r, t)[j] / 32);
        experts.insert(a->of(r, t)[j]);
      }
      CHECK(groups.size() <= 4);
      CHECK(experts.size() == 8);
    }
}
