#include "engine/routing/weight_matching.hpp"

#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

#include "engine/core/engine_assert.hpp"

namespace railcheck::routing {
namespace {

constexpr std::string_view kWeight = ".weight";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The trainer names a rollout weight comes from: the fusion's parts when a rule names its base,
// else the same name.
std::vector<std::string> trainer_names_for(const std::string& rollout_name, const ModelRules& rules) {
  if (ends_with(rollout_name, kWeight)) {
    const std::string_view base(rollout_name.data(), rollout_name.size() - kWeight.size());
    for (const ProjectionFusion& f : rules.fusions) {
      if (!ends_with(base, f.fused)) continue;
      const std::string_view prefix = base.substr(0, base.size() - f.fused.size());
      if (!prefix.empty() && prefix.back() != '.') continue;
      std::vector<std::string> out;
      for (const std::string& part : f.parts) out.push_back(fmt::format("{}{}{}", prefix, part, kWeight));
      return out;
    }
  }
  return {rollout_name};
}

// Concatenation on dim 0 of the parts' global shapes; an error when the other dims differ.
Result<std::vector<std::uint64_t>> fused_shape(const TrainerMetadata& t, const std::vector<std::uint32_t>& parts,
                                               const std::string& rollout_name) {
  std::vector<std::uint64_t> shape = t.params[parts[0]].shape;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto& s = t.params[parts[i]].shape;
    if (s.size() != shape.size() || s.empty() || !std::equal(s.begin() + 1, s.end(), shape.begin() + 1))
      return Error{fmt::format("{}: cannot fuse {} {} with {} {} on dim 0", rollout_name, t.params[parts[0]].name,
                               shape_text(t.params[parts[0]].shape), t.params[parts[i]].name, shape_text(s)),
                   "fused parts must agree on every dimension but the first"};
    shape[0] += s[0];
  }
  return shape;
}

// Trainer dtype -> rollout dtype: equal, or quantized to FP8 with a block scale.
Result<bool> check_dtypes(const TrainerParam& part, const RolloutParam& weight, const RolloutParam* scale) {
  const bool quantize = part.dtype != weight.dtype;
  if (quantize && weight.dtype != DType::FP8)
    return Error{fmt::format("{}: trainer {} is {}, rollout wants {}", weight.name, part.name, to_string(part.dtype),
                             to_string(weight.dtype)),
                 "only same-dtype copies and quantization to fp8 are supported"};
  if (quantize && scale == nullptr)
    return Error{fmt::format("{}: quantized to fp8 but the rollout has no scale parameter", weight.name),
                 "the rollout must list <base>.weight_scale_inv (or the model's scale suffix)"};
  if (!quantize && scale != nullptr)
    return Error{
        fmt::format("{}: the rollout has a scale {} for a weight that is not quantized", weight.name, scale->name), ""};
  return quantize;
}

Result<bool> check_scale_shape(const RolloutParam& weight, const RolloutParam& scale) {
  if (weight.shape.size() != 2 ||
      scale.shape != std::vector<std::uint64_t>{blocks(weight.shape[0]), blocks(weight.shape[1])})
    return Error{fmt::format("{}: scale shape {} does not match {}x{} blocks of weight {}", scale.name,
                             shape_text(scale.shape), kQuantBlock, kQuantBlock, shape_text(weight.shape)),
                 ""};
  return true;
}

}  // namespace

Result<std::vector<WeightMapping>> match_weights(const TrainerMetadata& trainer, const RolloutMetadata& rollout,
                                                 const ModelRules& rules) {
  if (auto ok = validate(trainer); !ok) return ok.error();
  if (auto ok = validate(rollout); !ok) return ok.error();
  std::unordered_map<std::string_view, std::uint32_t> trainer_index;
  for (std::uint32_t i = 0; i < trainer.params.size(); ++i)
    if (!trainer_index.emplace(trainer.params[i].name, i).second)
      return Error{fmt::format("trainer parameter {} is listed twice", trainer.params[i].name), ""};
  // Scales are looked up from their weight; the rest are weights (or plain tensors: norms, biases).
  std::unordered_map<std::string_view, std::uint32_t> scale_index;
  for (std::uint32_t i = 0; i < rollout.params.size(); ++i)
    if (ends_with(rollout.params[i].name, rules.scale_suffix)) scale_index.emplace(rollout.params[i].name, i);

  std::vector<WeightMapping> out;
  std::vector<bool> used(trainer.params.size(), false);
  std::size_t scales_used = 0;
  for (std::uint32_t w = 0; w < rollout.params.size(); ++w) {
    const RolloutParam& weight = rollout.params[w];
    if (ends_with(weight.name, rules.scale_suffix)) continue;
    WeightMapping m;
    m.weight = w;
    const RolloutParam* scale = nullptr;
    if (ends_with(weight.name, kWeight)) {
      const std::string scale_name = weight.name.substr(0, weight.name.size() - kWeight.size()) + rules.scale_suffix;
      if (auto it = scale_index.find(scale_name); it != scale_index.end()) {
        m.scale = it->second;
        scale = &rollout.params[it->second];
        ++scales_used;
      }
    }
    for (const std::string& name : trainer_names_for(weight.name, rules)) {
      auto it = trainer_index.find(name);
      if (it == trainer_index.end())
        return Error{
            fmt::format("rollout parameter {} needs trainer parameter {}, which no trainer has", weight.name, name),
            fmt::format("check the {} fusion rules and the trainer's parameter names", rules.model)};
      if (used[it->second])
        return Error{
            fmt::format("trainer parameter {} would feed two rollout parameters (second: {})", name, weight.name), ""};
      used[it->second] = true;
      m.parts.push_back(it->second);
    }
    if (!RAILCHECK_ASSERT(!m.parts.empty(), "a rollout weight comes from one trainer parameter at least"))
      return Error{fmt::format("{}: no trainer parameter", weight.name), ""};
    const TrainerParam& first = trainer.params[m.parts[0]];
    m.mesh = first.mesh;
    for (std::uint32_t p : m.parts) {
      const TrainerParam& part = trainer.params[p];
      if (part.mesh != m.mesh || part.dtype != first.dtype)
        return Error{
            fmt::format("{}: fused parts {} and {} differ in mesh or dtype", weight.name, first.name, part.name),
            "parts of one fusion must be gathered together"};
    }
    auto shape = fused_shape(trainer, m.parts, weight.name);
    if (!shape) return shape.error();
    if (shape.value() != weight.shape)
      return Error{fmt::format("{}: rollout shape {} but the trainer gives {}", weight.name, shape_text(weight.shape),
                               shape_text(shape.value())),
                   ""};
    auto quantize = check_dtypes(first, weight, scale);
    if (!quantize) return quantize.error();
    m.quantize = quantize.value();
    if (scale != nullptr)
      if (auto ok = check_scale_shape(weight, *scale); !ok) return ok.error();
    m.gathered_bytes = param_bytes(shape.value(), first.dtype);
    out.push_back(std::move(m));
  }
  if (scales_used != scale_index.size())
    return Error{fmt::format("{} rollout scale parameters have no weight", scale_index.size() - scales_used), ""};
  for (std::uint32_t i = 0; i < trainer.params.size(); ++i)
    if (!used[i])
      return Error{fmt::format("trainer parameter {} has no rollout counterpart", trainer.params[i].name),
                   "every trainer parameter must reach the rollout GPUs, or the rollout runs on stale weights"};
  RAILCHECK_ASSERT(out.size() + scale_index.size() == rollout.params.size(),
                   "every rollout parameter is a mapped weight or the scale of one");
  return out;
}

}  // namespace railcheck::routing
