#include "engine/routing/weight_routing_table.hpp"

#include <algorithm>

#include "engine/core/engine_assert.hpp"
#include "engine/routing/mesh_groups.hpp"

namespace railcheck::routing {

std::vector<std::vector<WeightWrite>> receivers_by_mapping(const RolloutMetadata& rollout,
                                                           std::span<const WeightMapping> mappings) {
  // Rollout parameter -> (mapping, is the scale); a scale's bytes ride with its weight's write.
  std::vector<std::uint32_t> mapping_of(rollout.params.size(), UINT32_MAX);
  for (std::uint32_t m = 0; m < mappings.size(); ++m) {
    if (!RAILCHECK_ASSERT(mappings[m].weight < rollout.params.size() &&
                              (!mappings[m].scale || *mappings[m].scale < rollout.params.size()),
                          "a mapping names the rollout's own parameters (match_weights made it)"))
      continue;
    mapping_of[mappings[m].weight] = m;
    if (mappings[m].scale) mapping_of[*mappings[m].scale] = m;
  }
  std::vector<std::vector<WeightWrite>> out(mappings.size());
  for (std::uint32_t g = 0; g < rollout.gpus.size(); ++g)
    for (const RolloutHolding& h : rollout.gpus[g]) {
      const std::uint32_t m = mapping_of[h.param];
      if (m == UINT32_MAX) continue;
      const std::uint64_t bytes = h.elements * bytes_per_element(rollout.params[h.param].dtype);
      auto& list = out[m];
      if (list.empty() || list.back().rollout_gpu != g)
        list.push_back({g, bytes});
      else
        list.back().bytes += bytes;
    }
  return out;
}

namespace {

// A mesh's mappings in an order that keeps every rollout GPU receiving from the start: the
// mappings bucketed by the first GPU they go to (model order kept inside a bucket), then taken
// one from each bucket in turn. In model order every trainer would send its first experts to
// the same half of the rollout GPUs while the other half idles (docs/routing.md, the plan at
// the bound).
std::vector<std::uint32_t> interleaved_by_receiver(const std::vector<std::uint32_t>& in,
                                                   const std::vector<std::vector<WeightWrite>>& receivers) {
  std::vector<std::vector<std::uint32_t>> buckets;
  std::vector<std::uint32_t> bucket_gpu;
  for (std::uint32_t m : in) {
    const std::uint32_t gpu = receivers[m].empty() ? UINT32_MAX : receivers[m].front().rollout_gpu;
    const auto it = std::find(bucket_gpu.begin(), bucket_gpu.end(), gpu);
    if (it == bucket_gpu.end()) {
      bucket_gpu.push_back(gpu);
      buckets.push_back({m});
    } else {
      buckets[static_cast<std::size_t>(it - bucket_gpu.begin())].push_back(m);
    }
  }
  std::vector<std::uint32_t> out;
  out.reserve(in.size());
  for (std::size_t k = 0; out.size() < in.size(); ++k)
    for (const auto& b : buckets)
      if (k < b.size()) out.push_back(b[k]);
  return out;
}

}  // namespace

WeightRoutingTable build_routing_table(const TrainerMetadata& trainer, const RolloutMetadata& rollout,
                                       std::span<const WeightMapping> mappings, TableOrder order) {
  WeightRoutingTable table;
  table.sent_bytes.assign(trainer.ranks, 0);
  table.received_bytes.assign(rollout.gpus.size(), 0);
  const auto receivers = receivers_by_mapping(rollout, mappings);

  std::vector<std::vector<std::uint32_t>> mappings_of_mesh(trainer.meshes.size());
  for (std::uint32_t m = 0; m < mappings.size(); ++m) mappings_of_mesh[mappings[m].mesh].push_back(m);
  if (order == TableOrder::Interleaved)
    for (auto& list : mappings_of_mesh) list = interleaved_by_receiver(list, receivers);
  // Only meshes that carry a parameter take part in the schedule.
  std::vector<DeviceMesh> used;
  std::vector<std::uint32_t> used_index;
  for (std::uint32_t i = 0; i < trainer.meshes.size(); ++i)
    if (!mappings_of_mesh[i].empty()) {
      used.push_back(trainer.meshes[i]);
      used_index.push_back(i);
    }

  for (const auto& group : find_disjoint_mesh_groups(used)) {
    MeshGroupTable g;
    g.per_trainer.resize(trainer.ranks);
    // Balance is per group: groups are separated by a barrier, so bytes sent in an earlier group
    // do not delay this one.
    std::vector<std::uint64_t> group_sent(trainer.ranks, 0);
    for (std::uint32_t u : group) {
      const std::uint32_t mesh_index = used_index[u];
      g.meshes.push_back(mesh_index);
      const DeviceMesh& mesh = trainer.meshes[mesh_index];
      if (!RAILCHECK_ASSERT(!mesh.ranks.empty(), "a mesh that carries a parameter has a rank to send it")) continue;
      for (std::uint32_t m : mappings_of_mesh[mesh_index]) {
        for (std::uint32_t member : mesh.ranks) g.per_trainer[member].push_back({m, {}});
        for (const WeightWrite& w : receivers[m]) {
          const std::uint32_t src = *std::min_element(mesh.ranks.begin(), mesh.ranks.end(), [&](auto a, auto b) {
            return group_sent[a] != group_sent[b] ? group_sent[a] < group_sent[b] : a < b;
          });
          group_sent[src] += w.bytes;
          table.sent_bytes[src] += w.bytes;
          table.received_bytes[w.rollout_gpu] += w.bytes;
          table.total_bytes += w.bytes;
          ++table.writes;
          g.per_trainer[src].back().writes.push_back(w);
        }
      }
    }
    table.groups.push_back(std::move(g));
  }
  // Every byte a trainer sends lands on a rollout GPU: the two sides' totals agree.
  std::uint64_t sent = 0, received = 0;
  for (const std::uint64_t b : table.sent_bytes) sent += b;
  for (const std::uint64_t b : table.received_bytes) received += b;
  RAILCHECK_ASSERT(sent == table.total_bytes && received == table.total_bytes,
                   "the bytes sent, the bytes received and the table's total agree");
  return table;
}

}  // namespace railcheck::routing
