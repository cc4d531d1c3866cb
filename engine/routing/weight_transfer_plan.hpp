#pragma once
// Everything the controller computes once for a model deployment: both sides' metadata, the
// name mapping and the routing table (seed: compute_weight_transfer_schedule).
#include <vector>

#include "engine/routing/model_layout.hpp"
#include "engine/routing/weight_routing_table.hpp"

namespace railcheck::routing {

struct WeightTransferPlan {
  TrainerMetadata trainer;
  RolloutMetadata rollout;
  std::vector<WeightMapping> mappings;
  WeightRoutingTable table;
};

Result<WeightTransferPlan> plan_weight_transfer(const ModelConfig& model, const TrainerParallelism& trainer,
                                                const RolloutParallelism& rollout,
                                                TableOrder order = TableOrder::Interleaved);

}  // namespace railcheck::routing
