// Wait-for graph analysis (wait_for_graph.hpp).
#include "engine/plan/wait_for_graph.hpp"

#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <map>

namespace railcheck::plan {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

std::string describe_edge(const WaitEdge& e) {
  return fmt::format("rank {} waits on channel {} in {} for rank {}, which {}", e.waiter, e.channel, e.waiting_on,
                     e.holder, e.holder_at);
}

}  // namespace

std::string Hang::describe() const {
  std::string out = kind == Kind::Cycle ? fmt::format("deadlock: a cycle of {} waits\n", edges.size())
                                        : std::string("hang: a rank waits for one that will never come\n");
  for (const auto& e : edges) out += "  " + describe_edge(e) + "\n";
  return out;
}

Hang find_hang(std::uint32_t nranks, const std::vector<WaitEdge>& edges) {
  Graph g(nranks);
  std::map<std::pair<std::uint32_t, std::uint32_t>, const WaitEdge*> first_edge;
  for (const auto& e : edges) {
    if (first_edge.emplace(std::make_pair(e.waiter, e.holder), &e).second) boost::add_edge(e.waiter, e.holder, g);
  }
  std::vector<int> component(nranks);
  boost::strong_components(g, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g)));

  // A cycle: start inside a component with an internal edge and follow internal edges until a
  // rank repeats; the walk from that rank on is the cycle.
  for (const auto& [pair, edge] : first_edge) {
    if (component[pair.first] != component[pair.second]) continue;
    std::vector<const WaitEdge*> walk;
    std::map<std::uint32_t, std::size_t> seen;
    std::uint32_t at = pair.first;
    while (!seen.count(at)) {
      seen[at] = walk.size();
      for (auto [it, end] = boost::out_edges(at, g); it != end; ++it) {
        const auto next = static_cast<std::uint32_t>(boost::target(*it, g));
        if (component[next] != component[at]) continue;
        walk.push_back(first_edge.at({at, next}));
        at = next;
        break;
      }
    }
    Hang hang{Hang::Kind::Cycle, {}};
    for (std::size_t i = seen[at]; i < walk.size(); ++i) hang.edges.push_back(*walk[i]);
    return hang;
  }
  // No cycle: report the wait on a finished rank if there is one, else the first wait.
  for (const auto& e : edges)
    if (e.holder_finished) return Hang{Hang::Kind::StuckRank, {e}};
  return Hang{Hang::Kind::StuckRank, edges.empty() ? std::vector<WaitEdge>{} : std::vector<WaitEdge>{edges.front()}};
}

}  // namespace railcheck::plan
