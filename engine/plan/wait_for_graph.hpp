#pragma once
// Who waits for whom when the plans stop moving. Each edge says which rank waits, on which
// channel, with which item, for which rank, and what that rank is doing instead. A cycle in
// the graph (found with Boost.Graph's strong components) is a deadlock; without one, some rank
// waits on a rank that will never get there (it finished, or its channel holds other work).
#include <cstdint>
#include <string>
#include <vector>

namespace railcheck::plan {

struct WaitEdge {
  std::uint32_t waiter = 0;
  std::uint32_t holder = 0;
  std::uint32_t channel = 0;
  std::string waiting_on;  // the waiter's item: "AllReduce #1 count 1024 float32"
  std::string holder_at;   // what the holder's channel shows instead
  bool holder_finished = false;
};

struct Hang {
  enum class Kind : std::uint8_t { Cycle, StuckRank };
  Kind kind = Kind::Cycle;
  std::vector<WaitEdge> edges;  // the cycle in order, or the one edge to the stuck rank
  std::string describe() const;
};

// nranks vertices; `edges` may hold several edges per pair (the first one is reported).
Hang find_hang(std::uint32_t nranks, const std::vector<WaitEdge>& edges);

}  // namespace railcheck::plan
