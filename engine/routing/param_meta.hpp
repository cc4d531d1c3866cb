#pragma once
// Parameter metadata as the controller collects it from every trainer and rollout GPU (seed,
// "跨机秒传RL模型参数更新的一些探索": get_param_metadata). Trainer parameters are DTensors:
// a global shape, a device mesh and one placement per mesh dimension (Shard(dim) or Replicate;
// the seed never sees Partial). Rollout GPUs hold plain tensors, possibly one slice of a
// parameter (tensor or expert parallelism), so each GPU lists the parameters it holds and how
// many elements of each.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/routing/dtype.hpp"

namespace railcheck::routing {

// The ranks of one DTensor device mesh, row-major over `shape`. full_tensor() is a collective
// over all of them, so every member must issue its gathers in the same order.
struct DeviceMesh {
  std::vector<std::uint32_t> ranks;
  std::vector<std::uint32_t> shape;  // product == ranks.size()
  bool operator==(const DeviceMesh&) const = default;
};

struct Placement {
  enum class Kind : std::uint8_t { Replicate, Shard };
  Kind kind = Kind::Replicate;
  std::uint32_t dim = 0;  // tensor dimension, for Shard
  static Placement replicate() { return {}; }
  static Placement shard(std::uint32_t dim) { return {Kind::Shard, dim}; }
};

struct TrainerParam {
  std::string name;                  // e.g. "model.layers.0.self_attn.q_proj.weight"
  std::vector<std::uint64_t> shape;  // global shape
  DType dtype = DType::BF16;
  std::uint32_t mesh = 0;             // index into TrainerMetadata::meshes
  std::vector<Placement> placements;  // one per mesh dimension
};

struct TrainerMetadata {
  std::uint32_t ranks = 0;
  std::vector<DeviceMesh> meshes;
  std::vector<TrainerParam> params;
};

struct RolloutParam {
  std::string name;                  // e.g. "model.layers.0.self_attn.qkv_proj.weight"
  std::vector<std::uint64_t> shape;  // global shape, after fusion
  DType dtype = DType::BF16;
};

// One parameter (or slice of it) on one rollout GPU.
struct RolloutHolding {
  std::uint32_t param = 0;  // index into RolloutMetadata::params
  std::uint64_t elements = 0;
};

struct RolloutMetadata {
  std::vector<RolloutParam> params;
  std::vector<std::vector<RolloutHolding>> gpus;  // what each rollout GPU holds
};

// How many pieces full_tensor() gathers: the product of the mesh dimensions that shard.
std::uint64_t shard_count(const DeviceMesh& mesh, const std::vector<Placement>& placements);
// The members that `rank` all-gathers with: those whose mesh coordinates agree with its own on
// every Replicate dimension (a (Replicate, Shard(0)) parameter on an [fsdp, ep] mesh gathers
// along ep only). In mesh order; includes `rank`.
std::vector<std::uint32_t> gather_peers(const DeviceMesh& mesh, const std::vector<Placement>& placements,
                                        std::uint32_t rank);
std::uint64_t param_bytes(const std::vector<std::uint64_t>& shape, DType t);

// Meshes name real ranks, their shapes multiply out, every parameter names a mesh, has one
// placement per mesh dimension and shards a dimension it has.
Result<bool> validate(const TrainerMetadata& t);
// Every holding names a parameter and holds at most all of it.
Result<bool> validate(const RolloutMetadata& r);

}  // namespace railcheck::routing
