#include "engine/routing/weight_transfer_plan.hpp"

namespace railcheck::routing {

Result<WeightTransferPlan> plan_weight_transfer(const ModelConfig& model, const TrainerParallelism& trainer,
                                                const RolloutParallelism& rollout, TableOrder order) {
  WeightTransferPlan plan;
  auto t = trainer_metadata(model, trainer);
  if (!t) return t.error();
  auto r = rollout_metadata(model, rollout);
  if (!r) return r.error();
  auto m = match_weights(t.value(), r.value(), model_rules(model));
  if (!m) return m.error();
  plan.trainer = std::move(t).value();
  plan.rollout = std::move(r).value();
  plan.mappings = std::move(m).value();
  plan.table = build_routing_table(plan.trainer, plan.rollout, plan.mappings, order);
  return plan;
}

}  // namespace railcheck::routing
