#pragma once
// Trainer-to-rollout parameter name matching (seed, "训推参数匹配"). The rollout engine may
// fuse projections the trainer keeps apart (q/k/v -> qkv, gate/up -> gate_up) and may hold a
// quantized weight plus its inverse scale where the trainer holds one BF16 weight. Each rollout
// weight becomes one WeightMapping: which trainer parameters to gather, in which order to
// concatenate them on dim 0, and whether to quantize the result.
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/routing/param_meta.hpp"

namespace railcheck::routing {

// Suffixes of a parameter's base name (the name without ".weight"): the rollout's `fused`
// is the trainer's `parts` concatenated on dim 0, in this order.
struct ProjectionFusion {
  std::string fused;               // "self_attn.qkv_proj"
  std::vector<std::string> parts;  // {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"}
};

// Per-model rules, as the seed's ModelWeightMatcher.
struct ModelRules {
  std::string model;
  std::vector<ProjectionFusion> fusions;
  std::string scale_suffix = ".weight_scale_inv";  // DeepSeek-V3 / Qwen3-FP8 checkpoint naming
};

struct WeightMapping {
  std::uint32_t weight = 0;            // rollout parameter index
  std::optional<std::uint32_t> scale;  // rollout parameter holding the block scales, if quantized
  std::vector<std::uint32_t> parts;    // trainer parameter indices, concatenated on dim 0
  std::uint32_t mesh = 0;              // the parts' shared trainer mesh
  bool quantize = false;               // the GPU quantizes after gathering and fusing
  std::uint64_t gathered_bytes = 0;    // the full fused tensor in the trainer's dtype
};

// Every rollout weight must come from trainer parameters with the right shape and a dtype it
// can be converted from; every trainer parameter must be used exactly once. The first mismatch
// is the error, naming the parameter.
Result<std::vector<WeightMapping>> match_weights(const TrainerMetadata& trainer, const RolloutMetadata& rollout,
                                                 const ModelRules& rules);

}  // namespace railcheck::routing
