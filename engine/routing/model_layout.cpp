#include "engine/routing/model_layout.hpp"

#include <fmt/format.h>

namespace railcheck::routing {
namespace {

// Pipeline stage of a parameter: layers spread evenly; the embedding on the first stage, the
// final norm and lm_head on the last.
std::uint32_t stage_of(std::int64_t layer, const ModelConfig& c, std::uint32_t pp) {
  if (layer < 0) return 0;
  if (layer >= static_cast<std::int64_t>(c.layers)) return pp - 1;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(layer) * pp / c.layers);
}

// Elements of a cut of `n` into `parts`, piece `i` (the first n % parts pieces are one larger).
std::uint64_t piece(std::uint64_t n, std::uint32_t parts, std::uint32_t i) {
  return n / parts + (i < n % parts ? 1 : 0);
}

std::uint64_t tp_elements(const std::vector<std::uint64_t>& shape, TpSplit split, std::uint32_t tp, std::uint32_t i) {
  const std::uint64_t all = element_count(shape);
  if (split == TpSplit::Replicated || shape.empty()) return all;
  const std::size_t dim = split == TpSplit::Rows ? 0 : shape.size() - 1;
  return all / shape[dim] * piece(shape[dim], tp, i);
}

}  // namespace

Result<TrainerMetadata> trainer_metadata(const ModelConfig& c, const TrainerParallelism& p) {
  if (p.pp == 0 || p.fsdp == 0 || p.ep == 0) return Error{"trainer pp, fsdp and ep must be positive", ""};
  if (p.pp > c.layers)
    return Error{fmt::format("trainer pp {} exceeds the {} layers of {}", p.pp, c.layers, c.name), ""};
  if (c.experts > 0 && p.ep > c.experts)
    return Error{fmt::format("trainer ep {} exceeds the {} experts of {}", p.ep, c.experts, c.name), ""};
  TrainerMetadata t;
  t.ranks = p.ranks();
  auto rank = [&](std::uint32_t f, std::uint32_t s, std::uint32_t e) { return f * (p.pp * p.ep) + s * p.ep + e; };
  // Stage meshes first (indices 0..pp-1), then expert meshes (pp + s * ep + e).
  for (std::uint32_t s = 0; s < p.pp; ++s) {
    DeviceMesh m{{}, {p.fsdp, p.ep}};
    for (std::uint32_t f = 0; f < p.fsdp; ++f)
      for (std::uint32_t e = 0; e < p.ep; ++e) m.ranks.push_back(rank(f, s, e));
    t.meshes.push_back(std::move(m));
  }
  for (std::uint32_t s = 0; s < p.pp; ++s)
    for (std::uint32_t e = 0; e < p.ep; ++e) {
      DeviceMesh m{{}, {p.fsdp}};
      for (std::uint32_t f = 0; f < p.fsdp; ++f) m.ranks.push_back(rank(f, s, e));
      t.meshes.push_back(std::move(m));
    }
  for (ModelParam& mp : model_parameters(c)) {
    const std::uint32_t s = stage_of(mp.layer, c, p.pp);
    TrainerParam tp{std::move(mp.name), std::move(mp.shape), p.dtype, s, {Placement::replicate(), Placement::shard(0)}};
    if (mp.expert >= 0) {
      const auto e = static_cast<std::uint32_t>(static_cast<std::uint64_t>(mp.expert) * p.ep / c.experts);
      tp.mesh = p.pp + s * p.ep + e;
      tp.placements = {Placement::shard(0)};
    }
    t.params.push_back(std::move(tp));
  }
  return t;
}

Result<RolloutMetadata> rollout_metadata(const ModelConfig& c, const RolloutParallelism& p) {
  if (p.replicas == 0 || p.gpus_per_replica == 0)
    return Error{"rollout replicas and gpus_per_replica must be positive", ""};
  if (p.dtype == DType::F32) return Error{"rollout dtype f32 is not a serving format here", "use bf16 or fp8"};
  RolloutMetadata r;
  r.gpus.resize(p.gpus());
  const std::uint32_t tp = p.gpus_per_replica;
  auto hold = [&](std::uint32_t param, const ModelParam& mp, const std::vector<std::uint64_t>& shape) {
    for (std::uint32_t rep = 0; rep < p.replicas; ++rep) {
      if (mp.expert >= 0) {
        const auto i = static_cast<std::uint32_t>(static_cast<std::uint64_t>(mp.expert) * tp / c.experts);
        r.gpus[rep * tp + i].push_back({param, element_count(shape)});
        continue;
      }
      for (std::uint32_t i = 0; i < tp; ++i)
        r.gpus[rep * tp + i].push_back({param, tp_elements(shape, mp.split, tp, i)});
    }
  };
  const ModelRules rules = model_rules(c);
  for (const ModelParam& mp : fuse_projections(model_parameters(c), rules)) {
    const bool quantized = p.dtype == DType::FP8 && mp.linear;
    const auto w = static_cast<std::uint32_t>(r.params.size());
    r.params.push_back({mp.name, mp.shape, quantized ? DType::FP8 : DType::BF16});
    hold(w, mp, mp.shape);
    if (!quantized) continue;
    const std::string base = mp.name.substr(0, mp.name.size() - std::string_view(".weight").size());
    const std::vector<std::uint64_t> scale_shape{blocks(mp.shape[0]), blocks(mp.shape[1])};
    r.params.push_back({base + rules.scale_suffix, scale_shape, DType::F32});
    hold(w + 1, mp, scale_shape);
  }
  return r;
}

}  // namespace railcheck::routing
