#pragma once
// Parameter metadata generators: what the controller would collect from a real trainer and
// rollout deployment of a model, built from the model's public config numbers.
//
// Trainer (the seed's FSDP x PP x EP layout): rank = f * (pp * ep) + s * ep + e for FSDP index
// f, pipeline stage s and expert-parallel index e. Non-expert parameters of stage s live on the
// 2-D mesh of that stage's ranks [fsdp, ep] as (Replicate, Shard(0)); routed experts live on
// the 1-D mesh of the fsdp ranks sharing (s, e) as Shard(0), expert x on EP index
// x * ep / experts. With FSDP=2, PP=2, EP=8 this is exactly the seed's 32-GPU example.
//
// Rollout: `replicas` data-parallel copies of `gpus_per_replica` GPUs each. Inside a replica
// dense projections are tensor-parallel (rows or columns, model_params.hpp), norms and routers
// replicated, routed expert x lives whole on GPU x * gpus_per_replica / experts. With an FP8
// rollout every linear is stored block-quantized with an F32 scale per 128x128 block.
#include <cstdint>

#include "engine/core/result.hpp"
#include "engine/routing/model_params.hpp"

namespace railcheck::routing {

struct TrainerParallelism {
  std::uint32_t pp = 1;
  std::uint32_t fsdp = 1;
  std::uint32_t ep = 1;
  DType dtype = DType::BF16;
  std::uint32_t ranks() const { return pp * fsdp * ep; }
};

struct RolloutParallelism {
  std::uint32_t replicas = 1;
  std::uint32_t gpus_per_replica = 1;
  DType dtype = DType::BF16;  // FP8: block-quantized linears
  std::uint32_t gpus() const { return replicas * gpus_per_replica; }
};

Result<TrainerMetadata> trainer_metadata(const ModelConfig& c, const TrainerParallelism& p);
Result<RolloutMetadata> rollout_metadata(const ModelConfig& c, const RolloutParallelism& p);

}  // namespace railcheck::routing
