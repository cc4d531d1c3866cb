#include "engine/routing/model_params.hpp"

#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

namespace railcheck::routing {
namespace {

using Shape = std::vector<std::uint64_t>;

struct LayerWriter {
  std::vector<ModelParam>& out;
  std::int64_t layer;
  std::string prefix;

  void norm(std::string_view name, std::uint64_t n) const {
    out.push_back({fmt::format("{}{}.weight", prefix, name), {n}, layer, -1, false, TpSplit::Replicated});
  }
  void linear(std::string_view name, std::uint64_t rows, std::uint64_t cols, TpSplit split,
              std::int64_t expert = -1) const {
    out.push_back({fmt::format("{}{}.weight", prefix, name), {rows, cols}, layer, expert, true, split});
  }
  // gate/up are column-parallel, down is row-parallel.
  void mlp(std::string_view name, std::uint64_t inter, std::uint64_t hidden, std::int64_t expert = -1) const {
    const TpSplit rows = expert < 0 ? TpSplit::Rows : TpSplit::Replicated;
    const TpSplit cols = expert < 0 ? TpSplit::Cols : TpSplit::Replicated;
    linear(fmt::format("{}.gate_proj", name), inter, hidden, rows, expert);
    linear(fmt::format("{}.up_proj", name), inter, hidden, rows, expert);
    linear(fmt::format("{}.down_proj", name), hidden, inter, cols, expert);
  }
};

void attention(const ModelConfig& c, const LayerWriter& w) {
  if (c.mla()) {
    const std::uint64_t qk = c.qk_nope_head_dim + c.qk_rope_head_dim;
    // The low-rank down-projections are small and replicated across TP ranks.
    w.linear("self_attn.q_a_proj", c.q_lora_rank, c.hidden, TpSplit::Replicated);
    w.norm("self_attn.q_a_layernorm", c.q_lora_rank);
    w.linear("self_attn.q_b_proj", c.heads * qk, c.q_lora_rank, TpSplit::Rows);
    w.linear("self_attn.kv_a_proj_with_mqa", c.kv_lora_rank + c.qk_rope_head_dim, c.hidden, TpSplit::Replicated);
    w.norm("self_attn.kv_a_layernorm", c.kv_lora_rank);
    w.linear("self_attn.kv_b_proj", c.heads * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank, TpSplit::Rows);
    w.linear("self_attn.o_proj", c.hidden, c.heads * c.v_head_dim, TpSplit::Cols);
    return;
  }
  w.linear("self_attn.q_proj", c.heads * c.head_dim, c.hidden, TpSplit::Rows);
  w.linear("self_attn.k_proj", c.kv_heads * c.head_dim, c.hidden, TpSplit::Rows);
  w.linear("self_attn.v_proj", c.kv_heads * c.head_dim, c.hidden, TpSplit::Rows);
  w.linear("self_attn.o_proj", c.hidden, c.heads * c.head_dim, TpSplit::Cols);
  w.norm("self_attn.q_norm", c.head_dim);
  w.norm("self_attn.k_norm", c.head_dim);
}

void moe(const ModelConfig& c, const LayerWriter& w) {
  w.out.push_back({w.prefix + "mlp.gate.weight", {c.experts, c.hidden}, w.layer, -1, false, TpSplit::Replicated});
  if (c.mla())  // DeepSeek-V3's aux-loss-free balancing bias
    w.out.push_back(
        {w.prefix + "mlp.gate.e_score_correction_bias", {c.experts}, w.layer, -1, false, TpSplit::Replicated});
  for (std::uint64_t e = 0; e < c.experts; ++e)
    w.mlp(fmt::format("mlp.experts.{}", e), c.moe_intermediate, c.hidden, static_cast<std::int64_t>(e));
  if (c.shared_experts > 0) w.mlp("mlp.shared_experts", c.moe_intermediate * c.shared_experts, c.hidden);
}

}  // namespace

std::vector<ModelParam> model_parameters(const ModelConfig& c) {
  std::vector<ModelParam> out;
  out.push_back({"model.embed_tokens.weight", {c.vocab, c.hidden}, -1, -1, false, TpSplit::Rows});
  for (std::uint64_t l = 0; l < c.layers; ++l) {
    const LayerWriter w{out, static_cast<std::int64_t>(l), fmt::format("model.layers.{}.", l)};
    w.norm("input_layernorm", c.hidden);
    attention(c, w);
    w.norm("post_attention_layernorm", c.hidden);
    if (l < c.first_dense_layers)
      w.mlp("mlp", c.intermediate, c.hidden);
    else
      moe(c, w);
  }
  const auto last = static_cast<std::int64_t>(c.layers);
  out.push_back({"model.norm.weight", {c.hidden}, last, -1, false, TpSplit::Replicated});
  out.push_back({"lm_head.weight", {c.vocab, c.hidden}, last, -1, false, TpSplit::Rows});
  return out;
}

std::uint64_t parameter_count(const std::vector<ModelParam>& params) {
  std::uint64_t n = 0;
  for (const ModelParam& p : params) n += element_count(p.shape);
  return n;
}

ModelRules model_rules(const ModelConfig& c) {
  ModelRules r;
  r.model = c.name;
  if (c.mla())
    r.fusions.push_back(
        {"self_attn.fused_qkv_a_proj_with_mqa", {"self_attn.q_a_proj", "self_attn.kv_a_proj_with_mqa"}});
  else
    r.fusions.push_back({"self_attn.qkv_proj", {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"}});
  r.fusions.push_back({"gate_up_proj", {"gate_proj", "up_proj"}});
  return r;
}

std::vector<ModelParam> fuse_projections(const std::vector<ModelParam>& params, const ModelRules& rules) {
  std::unordered_map<std::string_view, const ModelParam*> by_name;
  for (const ModelParam& p : params) by_name.emplace(p.name, &p);
  constexpr std::string_view kWeight = ".weight";
  // The position of `part` at the end of `base` after a '.', or npos.
  auto suffix_at = [](std::string_view base, std::string_view part) {
    if (base.size() < part.size() || base.substr(base.size() - part.size()) != part) return std::string_view::npos;
    const std::size_t at = base.size() - part.size();
    return at == 0 || base[at - 1] == '.' ? at : std::string_view::npos;
  };
  std::vector<ModelParam> out;
  for (const ModelParam& p : params) {
    std::string_view base(p.name);
    if (base.size() > kWeight.size() && base.substr(base.size() - kWeight.size()) == kWeight)
      base.remove_suffix(kWeight.size());
    bool consumed = false;
    for (const ProjectionFusion& f : rules.fusions) {
      for (std::size_t i = 0; i < f.parts.size() && !consumed; ++i) {
        const std::size_t at = suffix_at(base, f.parts[i]);
        if (at == std::string_view::npos) continue;
        consumed = true;
        if (i > 0) break;  // emitted with the first part
        const std::string prefix(base.substr(0, at));
        ModelParam fused = p;
        fused.name = prefix + f.fused + std::string(kWeight);
        for (std::size_t j = 1; j < f.parts.size() && consumed; ++j) {
          auto it = by_name.find(prefix + f.parts[j] + std::string(kWeight));
          if (it == by_name.end())
            consumed = false;  // not this fusion after all: keep it whole
          else
            fused.shape[0] += it->second->shape[0];
        }
        if (consumed) out.push_back(std::move(fused));
      }
    }
    if (!consumed) out.push_back(p);
  }
  return out;
}

}  // namespace railcheck::routing
