#pragma once
// Architecture numbers of real MoE models, from their public Hugging Face config.json files
// (no download at run time; the numbers are written down in model_config.cpp with their source).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace railcheck::routing {

struct ModelConfig {
  std::string name;
  std::string source;  // where the numbers come from
  std::uint64_t hidden = 0;
  std::uint64_t layers = 0;
  std::uint64_t heads = 0;
  std::uint64_t kv_heads = 0;
  std::uint64_t head_dim = 0;  // GQA models (Qwen3)
  std::uint64_t vocab = 0;
  std::uint64_t intermediate = 0;      // dense MLP layers
  std::uint64_t moe_intermediate = 0;  // one routed expert
  std::uint64_t experts = 0;           // routed experts per MoE layer
  std::uint64_t experts_per_token = 0;
  std::uint64_t shared_experts = 0;
  std::uint64_t first_dense_layers = 0;  // DeepSeek's first_k_dense_replace
  // Group-limited routing (DeepSeek-V3): a token's experts come from at most topk_group of
  // n_group expert groups.
  std::uint64_t n_group = 1;
  std::uint64_t topk_group = 1;
  // Multi-head latent attention (DeepSeek-V3, Kimi-K2); zero for GQA.
  std::uint64_t q_lora_rank = 0;
  std::uint64_t kv_lora_rank = 0;
  std::uint64_t qk_nope_head_dim = 0;
  std::uint64_t qk_rope_head_dim = 0;
  std::uint64_t v_head_dim = 0;
  bool mla() const { return kv_lora_rank != 0; }
};

std::span<const ModelConfig> model_configs();
std::optional<ModelConfig> find_model_config(std::string_view name);
std::string model_config_names();

}  // namespace railcheck::routing
