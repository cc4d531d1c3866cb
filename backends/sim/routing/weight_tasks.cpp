#include "backends/sim/routing/weight_tasks.hpp"

#include <algorithm>

namespace railcheck::sim {
namespace {

using routing::WeightMapping;

PipelineTask task_of(const routing::TrainerMetadata& trainer, const routing::RolloutMetadata& rollout,
                     const WeightMapping& m, std::uint32_t rank, const routing::TransferTask& entry) {
  const routing::TrainerParam& first = trainer.params[m.parts[0]];
  const routing::DeviceMesh& mesh = trainer.meshes[m.mesh];
  PipelineTask t;
  t.tensors = 1;
  t.gathered_bytes = m.gathered_bytes;
  t.local_bytes = m.gathered_bytes / routing::shard_count(mesh, first.placements);
  const std::uint64_t elements = m.gathered_bytes / routing::bytes_per_element(first.dtype);
  if (m.quantize) {
    const routing::RolloutParam& scale = rollout.params[*m.scale];
    t.output_bytes = elements * routing::bytes_per_element(rollout.params[m.weight].dtype) +
                     routing::element_count(scale.shape) * routing::bytes_per_element(scale.dtype);
  } else if (m.parts.size() > 1) {
    t.output_bytes = m.gathered_bytes;  // torch.cat makes a fused copy
  }
  t.tmp_bytes = t.gathered_bytes + t.output_bytes;
  t.send_bytes = t.output_bytes > 0 ? t.output_bytes : t.gathered_bytes;
  t.peers = routing::gather_peers(mesh, first.placements, rank);
  t.writes = entry.writes;
  return t;
}

void merge_into(PipelineTask& into, PipelineTask&& t) {
  into.tensors += t.tensors;
  into.local_bytes += t.local_bytes;
  into.gathered_bytes += t.gathered_bytes;
  into.output_bytes += t.output_bytes;
  into.tmp_bytes += t.tmp_bytes;
  into.send_bytes += t.send_bytes;
  for (const routing::WeightWrite& w : t.writes) {
    auto it = std::find_if(into.writes.begin(), into.writes.end(),
                           [&](const routing::WeightWrite& x) { return x.rollout_gpu == w.rollout_gpu; });
    if (it == into.writes.end())
      into.writes.push_back(w);
    else
      it->bytes += w.bytes;
  }
}

}  // namespace

std::vector<std::vector<std::vector<PipelineTask>>> pipeline_tasks(const routing::TrainerMetadata& trainer,
                                                                   const routing::RolloutMetadata& rollout,
                                                                   std::span<const WeightMapping> mappings,
                                                                   const routing::WeightRoutingTable& table,
                                                                   std::uint64_t batch_bytes) {
  std::vector<std::vector<std::vector<PipelineTask>>> out;
  for (const routing::MeshGroupTable& g : table.groups) {
    auto& per_trainer = out.emplace_back(trainer.ranks);
    for (std::uint32_t r = 0; r < trainer.ranks; ++r) {
      auto& tasks = per_trainer[r];
      for (const routing::TransferTask& entry : g.per_trainer[r]) {
        PipelineTask t = task_of(trainer, rollout, mappings[entry.mapping], r, entry);
        // Every peer sees the same entries in the same order and the same gathered sizes, so
        // they all cut the same batches: the collectives still line up.
        if (!tasks.empty() && tasks.back().peers == t.peers && tasks.back().gathered_bytes < batch_bytes)
          merge_into(tasks.back(), std::move(t));
        else
          tasks.push_back(std::move(t));
      }
    }
  }
  return out;
}

}  // namespace railcheck::sim
