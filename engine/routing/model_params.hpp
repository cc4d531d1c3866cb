#pragma once
// The parameter list of a model, named as its Hugging Face checkpoint names it (the trainer's
// names), with what the layout generators need to place each one.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/routing/model_config.hpp"
#include "engine/routing/weight_matching.hpp"

namespace railcheck::routing {

// How the rollout engine's tensor parallelism cuts a parameter (Megatron-style column- and
// row-parallel linears; vocabulary-parallel embeddings cut rows).
enum class TpSplit : std::uint8_t { Replicated, Rows, Cols };

struct ModelParam {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::int64_t layer = 0;    // -1: embedding; layers: final norm and lm_head
  std::int64_t expert = -1;  // routed expert index, -1 for everything else
  bool linear = false;       // a projection an FP8 checkpoint stores block-quantized
  TpSplit split = TpSplit::Replicated;
};

std::vector<ModelParam> model_parameters(const ModelConfig& c);
std::uint64_t parameter_count(const std::vector<ModelParam>& params);

// The projection fusions SGLang-style rollout engines apply to this architecture: qkv_proj
// (GQA) or fused_qkv_a_proj_with_mqa (MLA), and gate_up_proj for every MLP and expert.
ModelRules model_rules(const ModelConfig& c);

// The rollout engine's view: fusions applied (parts concatenated on dim 0, placed like the
// first part). Quantization is the layout's business, not the name list's.
std::vector<ModelParam> fuse_projections(const std::vector<ModelParam>& params, const ModelRules& rules);

}  // namespace railcheck::routing
