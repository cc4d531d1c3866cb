#pragma once
// The weight-transfer routing table (seed, "生成路由表"): per mesh group, per trainer rank, the
// ordered list of gathers it runs and the RDMA writes it issues after each. Built once when
// training starts; every later update only executes it.
//
// Rules it keeps:
// - every member of a mesh lists every parameter of that mesh, in the same order, because
//   full_tensor() is a collective; a member with no write for a parameter still gathers it;
// - for each (parameter, rollout GPU) the source is the mesh member that has sent the fewest
//   bytes so far in this group (ties to the lowest rank): after the gather every member holds
//   the full tensor, and all NICs are alike, so least-bytes-so-far balances the senders;
// - groups run one after another with a barrier between them (mesh_groups.hpp);
// - a mesh's parameters go in TableOrder: by default in turn by the rollout GPU they go to first.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/routing/weight_matching.hpp"

namespace railcheck::routing {

// One RDMA write (the weight slice and, when quantized, its scale slice) to one rollout GPU.
struct WeightWrite {
  std::uint32_t rollout_gpu = 0;
  std::uint64_t bytes = 0;
};

struct TransferTask {
  std::uint32_t mapping = 0;        // index into the WeightMapping list
  std::vector<WeightWrite> writes;  // may be empty: the gather is still due
};

struct MeshGroupTable {
  std::vector<std::uint32_t> meshes;
  std::vector<std::vector<TransferTask>> per_trainer;  // [trainer rank] -> tasks in issue order
};

struct WeightRoutingTable {
  std::vector<MeshGroupTable> groups;
  std::vector<std::uint64_t> sent_bytes;      // per trainer rank, all groups
  std::vector<std::uint64_t> received_bytes;  // per rollout GPU
  std::uint64_t total_bytes = 0;
  std::uint64_t writes = 0;
};

// The order of a mesh's parameters in the table (every member keeps the same one).
enum class TableOrder : std::uint8_t {
  Model,        // the model's parameter order (the seed's, and the table before issue 34)
  Interleaved,  // taken in turn from the rollout GPUs they first go to, so all of them receive
                // from the start (issue 34)
};

// `mappings` come from match_weights() on the same metadata.
WeightRoutingTable build_routing_table(const TrainerMetadata& trainer, const RolloutMetadata& rollout,
                                       std::span<const WeightMapping> mappings,
                                       TableOrder order = TableOrder::Interleaved);

// Bytes a rollout GPU receives for a mapping: its slice of the weight plus its slice of the
// scale. Indexed [mapping] -> (gpu, bytes) in GPU order.
std::vector<std::vector<WeightWrite>> receivers_by_mapping(const RolloutMetadata& rollout,
                                                           std::span<const WeightMapping> mappings);

}  // namespace railcheck::routing
