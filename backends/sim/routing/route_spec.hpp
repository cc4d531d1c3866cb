#pragma once
// Spec files for `railcheck route weights` and `railcheck route moe` (TOML; docs/routing.md
// lists every key with its default). Read with the scenario loader's checked reader, so a bad
// key or value is one "<file>:<line>: <key>: expected ..., got ..." line.
#include <cstdint>
#include <string>

#include "backends/sim/routing/gpu_fabric.hpp"
#include "backends/sim/routing/weight_transfer_sim.hpp"
#include "engine/core/result.hpp"
#include "engine/routing/model_layout.hpp"

namespace railcheck::sim {

struct WeightsSpec {
  std::string name;
  std::string description;
  routing::ModelConfig model;
  routing::TrainerParallelism trainer;
  routing::RolloutParallelism rollout;
  FabricParams fabric;
  std::string nic = "cx7-400g";
  std::uint32_t nics_per_gpu = 1;
  PipelineParams pipeline;
  routing::TableOrder table_order = routing::TableOrder::Interleaved;  // pipeline.table_order
};

struct MoeSpec {
  std::string name;
  std::string description;
  routing::ModelConfig model;
  std::uint32_t ranks = 64;
  std::uint32_t tokens_per_rank = 128;
  std::uint64_t seed = 1;
  routing::DType dispatch_dtype = routing::DType::FP8;  // FP8 tokens carry a scale per 128
  routing::DType combine_dtype = routing::DType::BF16;
  FabricParams fabric;
  std::string nic = "cx7-400g";
  std::uint32_t nics_per_gpu = 1;
};

Result<WeightsSpec> load_weights_spec(const std::string& path);
Result<MoeSpec> load_moe_spec(const std::string& path);

}  // namespace railcheck::sim
