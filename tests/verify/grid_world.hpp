#pragma once
// A toy world whose state space is known exactly, for the explorer's tests: two counters, each
// stepped by +1 up to `limit`, so (limit+1)^2 states, one end state, and every state but the
// edges reached through several paths (of the same length: duplicates within a bfs level).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "verify/invariant.hpp"

namespace railcheck::verify::testing {

struct GridWorld {
  struct ChoiceType {
    int axis = 0;
    bool operator==(const ChoiceType&) const = default;
  };
  int x = 0, y = 0, limit = 4;
  std::vector<ChoiceType> choices() const {
    std::vector<ChoiceType> c;
    if (x < limit) c.push_back({0});
    if (y < limit) c.push_back({1});
    return c;
  }
  void apply(const ChoiceType& c) { (c.axis == 0 ? x : y) += 1; }
  std::uint64_t fingerprint() const { return static_cast<std::uint64_t>(x * 1000 + y); }
};

// "The walk never reaches (bx, by)": its shortest path has bx + by steps.
inline std::vector<Invariant<GridWorld>> never_reaches(int bx, int by) {
  return {{"not-" + std::to_string(bx) + "-" + std::to_string(by), "the walk never reaches that cell",
           [bx, by](const GridWorld& w, bool) -> std::optional<std::string> {
             if (w.x == bx && w.y == by) return "reached (" + std::to_string(bx) + ", " + std::to_string(by) + ")";
             return std::nullopt;
           }}};
}

}  // namespace railcheck::verify::testing
