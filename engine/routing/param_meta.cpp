#include "engine/routing/param_meta.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railcheck::routing {

std::uint64_t shard_count(const DeviceMesh& mesh, const std::vector<Placement>& placements) {
  std::uint64_t n = 1;
  for (std::size_t i = 0; i < placements.size() && i < mesh.shape.size(); ++i)
    if (placements[i].kind == Placement::Kind::Shard) n *= mesh.shape[i];
  return n;
}

std::vector<std::uint32_t> gather_peers(const DeviceMesh& mesh, const std::vector<Placement>& placements,
                                        std::uint32_t rank) {
  // Row-major coordinates of mesh position i.
  auto coords = [&](std::size_t i) {
    std::vector<std::uint32_t> c(mesh.shape.size());
    for (std::size_t d = mesh.shape.size(); d-- > 0;) {
      c[d] = static_cast<std::uint32_t>(i % mesh.shape[d]);
      i /= mesh.shape[d];
    }
    return c;
  };
  const auto at = std::find(mesh.ranks.begin(), mesh.ranks.end(), rank);
  if (at == mesh.ranks.end()) return {};
  const auto mine = coords(static_cast<std::size_t>(at - mesh.ranks.begin()));
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < mesh.ranks.size(); ++i) {
    const auto c = coords(i);
    bool same = true;
    for (std::size_t d = 0; d < c.size() && same; ++d)
      same = (d < placements.size() && placements[d].kind == Placement::Kind::Shard) || c[d] == mine[d];
    if (same) out.push_back(mesh.ranks[i]);
  }
  return out;
}

std::uint64_t param_bytes(const std::vector<std::uint64_t>& shape, DType t) {
  return element_count(shape) * bytes_per_element(t);
}

Result<bool> validate(const TrainerMetadata& t) {
  for (std::size_t m = 0; m < t.meshes.size(); ++m) {
    const DeviceMesh& mesh = t.meshes[m];
    std::uint64_t size = 1;
    for (std::uint32_t d : mesh.shape) size *= d;
    if (mesh.ranks.empty() || size != mesh.ranks.size())
      return Error{fmt::format("trainer mesh {} has {} ranks but shape of {} elements", m, mesh.ranks.size(), size),
                   "a mesh's shape must multiply out to its rank count"};
    for (std::uint32_t r : mesh.ranks)
      if (r >= t.ranks) return Error{fmt::format("trainer mesh {} names rank {} of {}", m, r, t.ranks), ""};
    auto sorted = mesh.ranks;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return Error{fmt::format("trainer mesh {} lists a rank twice", m), ""};
  }
  for (const TrainerParam& p : t.params) {
    if (p.mesh >= t.meshes.size())
      return Error{fmt::format("trainer parameter {} names mesh {} of {}", p.name, p.mesh, t.meshes.size()), ""};
    if (p.placements.size() != t.meshes[p.mesh].shape.size())
      return Error{fmt::format("trainer parameter {} has {} placements for a {}-dimensional mesh", p.name,
                               p.placements.size(), t.meshes[p.mesh].shape.size()),
                   "give one Shard(dim) or Replicate per mesh dimension"};
    for (const Placement& pl : p.placements)
      if (pl.kind == Placement::Kind::Shard && pl.dim >= p.shape.size())
        return Error{
            fmt::format("trainer parameter {} is sharded on dim {} but has {} dims", p.name, pl.dim, p.shape.size()),
            ""};
  }
  return true;
}

Result<bool> validate(const RolloutMetadata& r) {
  for (std::size_t g = 0; g < r.gpus.size(); ++g)
    for (const RolloutHolding& h : r.gpus[g]) {
      if (h.param >= r.params.size())
        return Error{fmt::format("rollout GPU {} holds parameter {} of {}", g, h.param, r.params.size()), ""};
      const RolloutParam& p = r.params[h.param];
      if (h.elements == 0 || h.elements > element_count(p.shape))
        return Error{fmt::format("rollout GPU {} holds {} elements of {} ({} in all)", g, h.elements, p.name,
                                 element_count(p.shape)),
                     ""};
    }
  return true;
}

}  // namespace railcheck::routing
