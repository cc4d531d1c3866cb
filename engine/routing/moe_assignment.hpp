#pragma once
// Which experts each token goes to (top-k), and which rank holds each expert: the inputs of MoE
// dispatch/combine. Drawn from the driver's seeded generator; the engine draws nothing itself.
#include <cstdint>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/core/rng.hpp"
#include "engine/routing/model_config.hpp"

namespace railcheck::routing {

struct MoeCluster {
  std::uint32_t ranks = 0;
  std::uint32_t gpus_per_node = 8;
  std::uint32_t experts = 0;  // expert x lives on rank x * ranks / experts (contiguous blocks)
  std::uint32_t node_of(std::uint32_t rank) const { return rank / gpus_per_node; }
  std::uint32_t nodes() const { return (ranks + gpus_per_node - 1) / gpus_per_node; }
  std::uint32_t rank_of_expert(std::uint32_t x) const {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(x) * ranks / experts);
  }
};

struct TokenAssignment {
  std::uint32_t tokens_per_rank = 0;
  std::uint32_t top_k = 0;
  // experts[((rank * tokens_per_rank) + token) * top_k + j]: the token's j-th expert, distinct
  // within a token.
  std::vector<std::uint32_t> experts;
  const std::uint32_t* of(std::uint32_t rank, std::uint32_t token) const {
    return experts.data() + (static_cast<std::size_t>(rank) * tokens_per_rank + token) * top_k;
  }
};

// Uniform top-k with DeepSeek-V3's group limit: the token first picks topk_group of n_group
// expert groups, then its k experts among those groups. A stand-in for a trained router, whose
// choices are skewed; uniform choices are the even-load case.
Result<TokenAssignment> draw_token_assignment(const ModelConfig& c, const MoeCluster& cluster,
                                              std::uint32_t tokens_per_rank, SeededRng& rng);

}  // namespace railcheck::routing
