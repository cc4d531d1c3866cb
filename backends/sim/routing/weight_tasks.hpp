#pragma once
// What the simulated pipeline needs to know about each entry of a trainer's routing table: the
// byte counts of every stage, the gather peers, and the writes. Consecutive entries with the
// same gather peers may be merged into one batch (PipelineParams::batch_bytes).
#include <cstdint>
#include <vector>

#include "engine/routing/weight_routing_table.hpp"

namespace railcheck::sim {

struct PipelineTask {
  std::uint32_t tensors = 0;                 // table entries in this task
  std::uint64_t local_bytes = 0;             // the trainer's shards: the H2D copy
  std::uint64_t gathered_bytes = 0;          // full tensors after full_tensor()
  std::uint64_t output_bytes = 0;            // fused / quantized copies the GPU writes (0: sent as gathered)
  std::uint64_t tmp_bytes = 0;               // temporary GPU memory from the H2D copy to the fuse/quantize kernel
  std::uint64_t send_bytes = 0;              // of which the writes read: the fused/quantized copy, else the gathered
  std::vector<std::uint32_t> peers;          // gather peers in mesh order, this trainer included
  std::vector<routing::WeightWrite> writes;  // one per rollout GPU
};

// [group][trainer] -> tasks in issue order.
std::vector<std::vector<std::vector<PipelineTask>>> pipeline_tasks(const routing::TrainerMetadata& trainer,
                                                                   const routing::RolloutMetadata& rollout,
                                                                   std::span<const routing::WeightMapping> mappings,
                                                                   const routing::WeightRoutingTable& table,
                                                                   std::uint64_t batch_bytes);

}  // namespace railcheck::sim
