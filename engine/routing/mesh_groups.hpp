#pragma once
// Disjoint mesh groups (seed, "DeviceMesh"): full_tensor() is a collective over a mesh, and two
// meshes that share a rank cannot gather at the same time, since that rank runs one stream of
// collectives. Meshes that share no rank can. So the meshes are the vertices of a conflict graph
// (an edge where two meshes share a rank), a proper colouring of it is a schedule, and each
// colour is a group that gathers concurrently, with a barrier between groups.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/routing/param_meta.hpp"

namespace railcheck::routing {

// Groups of mesh indices. Within a group no two meshes share a rank; every mesh in `meshes` is
// in exactly one group. Greedy colouring in smallest-last order (Boost.Graph): deterministic,
// and optimal on the seed's FSDP x EP x PP layouts (one group for non-expert meshes, one for
// expert meshes).
std::vector<std::vector<std::uint32_t>> find_disjoint_mesh_groups(std::span<const DeviceMesh> meshes);

}  // namespace railcheck::routing
