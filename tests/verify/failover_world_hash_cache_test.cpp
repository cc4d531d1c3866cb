// FailoverWorld caches each connection's hash across steps that leave the connection alone
// (ConnWorld::hash_cache). A step that changed a connection without voiding its cache would
// merge distinct states and silently skip part of the state space, so hold the cached
// fingerprint against one computed afresh after every step of many random walks, the way the
// explorer steps: copy the parent (its caches filled), apply, fingerprint the child.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "engine/core/rng.hpp"
#include "tests/verify/parallel_bfs/same_result.hpp"
#include "verify/failover_world.hpp"

namespace {

using namespace railcheck;
using namespace railcheck::verify;

// Walks `walks` random paths of at most `steps` steps; returns how many steps it checked.
std::size_t check_walks(const FailoverModel& m, bool symmetry, std::uint64_t seed, int walks, int steps) {
  SeededRng rng(seed);
  std::size_t checked = 0;
  for (int walk = 0; walk < walks; ++walk) {
    FailoverWorld parent(m);
    parent.set_symmetry(symmetry);
    std::vector<std::string> path;
    for (int step = 0; step < steps; ++step) {
      const auto choices = parent.choices();
      if (choices.empty()) break;
      (void)parent.fingerprint();  // fill the caches, as the explorer does before expanding
      const Choice c = choices[rng.below(choices.size())];
      path.push_back(to_string(c));
      FailoverWorld child = parent;
      child.apply(c);
      const std::uint64_t cached = child.fingerprint();
      child.forget_cached_hashes();
      INFO(fmt::format("seed {} walk {} symmetry {} steps: {}", seed, walk, symmetry, fmt::join(path, ", ")));
      REQUIRE(child.fingerprint() == cached);
      ++checked;
      parent = std::move(child);
    }
  }
  return checked;
}

}  // namespace

TEST_CASE("a connection's cached hash always equals its hash computed afresh, both ways, symmetry on and off") {
  FailoverModel m = testing::small_failover_model(ReplayPolicy::Resync);
  m.bidirectional = true;
  m.link_failures = 2;
  m.losses = 2;
  m.timer_races = 2;
  for (const bool symmetry : {false, true}) {
    for (const std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
      // Long enough walks reach rail deaths, timers and failovers on both connections.
      CHECK(check_walks(m, symmetry, seed, 60, 400) > 60 * 20);
    }
  }
}

TEST_CASE("a step on one connection leaves the other connection's hash cached and valid") {
  FailoverModel m = testing::small_failover_model(ReplayPolicy::Resync);
  m.bidirectional = true;
  FailoverWorld w(m);
  const std::uint64_t before = w.fingerprint();
  // A control delivery on connection 0 changes connection 0 only.
  Choice on_zero{};
  bool found = false;
  for (const auto& c : w.choices())
    if (c.kind == Choice::Kind::Control && c.conn == 0) {
      on_zero = c;
      found = true;
    }
  REQUIRE(found);
  w.apply(on_zero);
  REQUIRE(w.conns()[1].hash_cache[0].has_value());
  CHECK_FALSE(w.conns()[0].hash_cache[0].has_value());
  const std::uint64_t after = w.fingerprint();
  CHECK(after != before);
  w.forget_cached_hashes();
  CHECK(w.fingerprint() == after);
}
