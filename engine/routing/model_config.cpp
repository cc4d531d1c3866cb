#include "engine/routing/model_config.hpp"

#include <array>

namespace railcheck::routing {
namespace {

const std::array kModels = {
    // Qwen/Qwen3-235B-A22B, config.json (Qwen3MoeForCausalLM): hidden_size 4096,
    // num_hidden_layers 94, num_attention_heads 64, num_key_value_heads 4, head_dim 128,
    // vocab_size 151936, intermediate_size 12288, moe_intermediate_size 1536, num_experts 128,
    // num_experts_per_tok 8, decoder_sparse_step 1 and mlp_only_layers [] (every layer is MoE),
    // tie_word_embeddings false. 235B parameters in all.
    ModelConfig{.name = "qwen3-235b-a22b",
                .source = "huggingface.co/Qwen/Qwen3-235B-A22B config.json",
                .hidden = 4096,
                .layers = 94,
                .heads = 64,
                .kv_heads = 4,
                .head_dim = 128,
                .vocab = 151936,
                .intermediate = 12288,
                .moe_intermediate = 1536,
                .experts = 128,
                .experts_per_token = 8},
    // deepseek-ai/DeepSeek-V3, config.json (DeepseekV3ForCausalLM): hidden_size 7168,
    // num_hidden_layers 61, num_attention_heads 128, num_key_value_heads 128, vocab_size 129280,
    // intermediate_size 18432, moe_intermediate_size 2048, n_routed_experts 256,
    // num_experts_per_tok 8, n_shared_experts 1, first_k_dense_replace 3, n_group 8,
    // topk_group 4, q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
    // qk_rope_head_dim 64, v_head_dim 128. 671B parameters without the MTP module.
    ModelConfig{.name = "deepseek-v3",
                .source = "huggingface.co/deepseek-ai/DeepSeek-V3 config.json",
                .hidden = 7168,
                .layers = 61,
                .heads = 128,
                .kv_heads = 128,
                .vocab = 129280,
                .intermediate = 18432,
                .moe_intermediate = 2048,
                .experts = 256,
                .experts_per_token = 8,
                .shared_experts = 1,
                .first_dense_layers = 3,
                .n_group = 8,
                .topk_group = 4,
                .q_lora_rank = 1536,
                .kv_lora_rank = 512,
                .qk_nope_head_dim = 128,
                .qk_rope_head_dim = 64,
                .v_head_dim = 128},
    // moonshotai/Kimi-K2-Instruct, config.json (the DeepseekV3 architecture): hidden_size 7168,
    // num_hidden_layers 61, num_attention_heads 64, num_key_value_heads 64, vocab_size 163840,
    // intermediate_size 18432, moe_intermediate_size 2048, n_routed_experts 384,
    // num_experts_per_tok 8, n_shared_experts 1, first_k_dense_replace 1, n_group 1,
    // topk_group 1, and DeepSeek-V3's MLA ranks. About 1.03T parameters.
    ModelConfig{.name = "kimi-k2",
                .source = "huggingface.co/moonshotai/Kimi-K2-Instruct config.json",
                .hidden = 7168,
                .layers = 61,
                .heads = 64,
                .kv_heads = 64,
                .vocab = 163840,
                .intermediate = 18432,
                .moe_intermediate = 2048,
                .experts = 384,
                .experts_per_token = 8,
                .shared_experts = 1,
                .first_dense_layers = 1,
                .q_lora_rank = 1536,
                .kv_lora_rank = 512,
                .qk_nope_head_dim = 128,
                .qk_rope_head_dim = 64,
                .v_head_dim = 128},
};

}  // namespace

std::span<const ModelConfig> model_configs() { return kModels; }

std::optional<ModelConfig> find_model_config(std::string_view name) {
  for (const ModelConfig& m : kModels)
    if (m.name == name) return m;
  return std::nullopt;
}

std::string model_config_names() {
  std::string out;
  for (const ModelConfig& m : kModels) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

}  // namespace railcheck::routing
