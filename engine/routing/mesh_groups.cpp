#include "engine/routing/mesh_groups.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/sequential_vertex_coloring.hpp>
#include <map>

// Boost 1.74's smallest_last_ordering.hpp uses make_shared_array_property_map without including
// its header, so that header comes first.
#include <boost/property_map/shared_array_property_map.hpp>
// After the header above.
#include <boost/graph/smallest_last_ordering.hpp>

#include "engine/core/engine_assert.hpp"

namespace railcheck::routing {

std::vector<std::vector<std::uint32_t>> find_disjoint_mesh_groups(std::span<const DeviceMesh> meshes) {
  using Graph = boost::adjacency_list<boost::setS, boost::vecS, boost::undirectedS>;
  using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
  Graph g(meshes.size());
  // Meshes by rank, so edges come from shared ranks only (no all-pairs scan).
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_rank;
  for (std::uint32_t m = 0; m < meshes.size(); ++m)
    for (std::uint32_t r : meshes[m].ranks) by_rank[r].push_back(m);
  for (const auto& [rank, ms] : by_rank)
    for (std::size_t i = 0; i < ms.size(); ++i)
      for (std::size_t j = i + 1; j < ms.size(); ++j) boost::add_edge(ms[i], ms[j], g);

  std::vector<Vertex> order(meshes.size());
  boost::smallest_last_vertex_ordering(
      g, boost::make_iterator_property_map(order.begin(), boost::get(boost::vertex_index, g)));
  std::vector<std::size_t> colour(meshes.size());
  auto colour_map = boost::make_iterator_property_map(colour.begin(), boost::get(boost::vertex_index, g));
  const std::size_t colours = boost::sequential_vertex_coloring(
      g, boost::make_iterator_property_map(order.begin(), boost::identity_property_map()), colour_map);

  std::vector<std::vector<std::uint32_t>> groups(colours);
  for (std::uint32_t m = 0; m < meshes.size(); ++m) groups[colour[m]].push_back(m);
  // Every colour is used (the colouring numbers them 0..colours-1), so every group has a front.
  for (const auto& group : groups) RAILCHECK_ASSERT(!group.empty(), "a disjoint mesh group holds one mesh at least");
  // Groups in order of their first mesh, so the schedule follows the caller's mesh order.
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return groups;
}

}  // namespace railcheck::routing
