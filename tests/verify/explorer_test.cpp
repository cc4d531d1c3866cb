// The explorer on a toy world whose state space is known exactly, so each search mode can be
// checked against hand-computed answers.
#include "verify/explorer.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "tests/verify/grid_world.hpp"

namespace {

using namespace railcheck::verify;

using testing::GridWorld;

// (3, 2) is "bad" for the tests that look for a violation: its shortest path has 5 steps.
const std::vector<Invariant<GridWorld>> kNeverThreeTwo = testing::never_reaches(3, 2);
const std::vector<Invariant<GridWorld>> kNothing = {};

}  // namespace

TEST_CASE("dfs exhausts a clean bound and counts each distinct state once") {
  SearchLimits lim;
  const auto r = explore<GridWorld>(GridWorld{}, kNothing, lim);
  REQUIRE_FALSE(r.violation);
  CHECK(r.stats.exhausted);
  CHECK(r.stats.distinct == 25);
  CHECK(r.stats.end_states == 1);
  CHECK(r.stats.max_depth == 8);
  CHECK(r.stats.states > r.stats.distinct);  // the grid is reached through many paths
}

TEST_CASE("bfs finds the shortest counterexample") {
  SearchLimits lim;
  lim.mode = SearchMode::Bfs;
  const auto r = explore<GridWorld>(GridWorld{}, kNeverThreeTwo, lim);
  REQUIRE(r.violation);
  CHECK(r.violation->invariant == "not-3-2");
  CHECK(r.violation->steps.size() == 5);
  GridWorld w;
  for (const auto& c : r.violation->steps) w.apply(c);
  CHECK((w.x == 3 && w.y == 2));
}

TEST_CASE("dfs finds a violation and its path replays to the bad state") {
  const auto r = explore<GridWorld>(GridWorld{}, kNeverThreeTwo, SearchLimits{});
  REQUIRE(r.violation);
  CHECK_FALSE(r.stats.exhausted);
  GridWorld w;
  for (const auto& c : r.violation->steps) w.apply(c);
  CHECK((w.x == 3 && w.y == 2));
}

TEST_CASE("a state limit makes the search inconclusive, not clean") {
  SearchLimits lim;
  lim.max_states = 10;
  const auto r = explore<GridWorld>(GridWorld{}, kNothing, lim);
  CHECK_FALSE(r.violation);
  CHECK_FALSE(r.stats.exhausted);
  CHECK(r.stats.truncated_by == "max_states");
}

TEST_CASE("random walks are reproducible from the seed and name the walk that failed") {
  SearchLimits lim;
  lim.mode = SearchMode::Random;
  lim.walks = 200;
  lim.seed = 42;
  const auto a = explore<GridWorld>(GridWorld{}, kNeverThreeTwo, lim);
  const auto b = explore<GridWorld>(GridWorld{}, kNeverThreeTwo, lim);
  INFO("seed " << lim.seed);
  REQUIRE(a.violation);
  REQUIRE(b.violation);
  CHECK(a.violation->walk == b.violation->walk);
  CHECK(a.violation->steps == b.violation->steps);
  CHECK_FALSE(a.stats.exhausted);
}

TEST_CASE("progress reports carry the running figures and the work still pending") {
  for (const auto mode : {SearchMode::Dfs, SearchMode::Bfs}) {
    SearchLimits lim;
    lim.mode = mode;
    lim.progress_every = 1;
    std::vector<SearchStats> seen;
    const auto r = explore<GridWorld>(GridWorld{}, kNothing, lim, [&](const SearchStats& s) { seen.push_back(s); });
    REQUIRE(r.stats.exhausted);
    REQUIRE(seen.size() == r.stats.states - (mode == SearchMode::Bfs ? 1 : 0));
    bool any_pending = false;
    for (std::size_t i = 1; i < seen.size(); ++i) {
      CHECK(seen[i].states == seen[i - 1].states + 1);
      CHECK(seen[i].distinct >= seen[i - 1].distinct);
      CHECK(seen[i].distinct <= 25);
      any_pending = any_pending || seen[i].pending > 0;
    }
    CHECK(any_pending);
    // The distinct states reached before the last report, plus at most the pending steps,
    // cover the grid: nothing is reached that was not pending.
    CHECK(seen.back().distinct + seen.back().pending >= 25);
  }
  SearchStats s;
  s.distinct = 100;
  s.seconds = 2;
  CHECK(s.distinct_per_second() == 50);
  CHECK(s.seconds_to_cap(1100) == 20);
  CHECK(s.seconds_to_cap(50) == 0);
  CHECK(std::isinf(SearchStats{}.seconds_to_cap(10)));
}

TEST_CASE("the visited set keeps each fingerprint once, zero included, across growth") {
  detail::FingerprintSet set(4);
  CHECK(set.insert(0));
  CHECK_FALSE(set.insert(0));
  for (std::uint64_t i = 1; i <= 10000; ++i) REQUIRE(set.insert(i * 0x10000));  // same low bits
  for (std::uint64_t i = 1; i <= 10000; ++i) REQUIRE_FALSE(set.insert(i * 0x10000));
  CHECK(set.insert(~0ULL));
  CHECK(set.size() == 10002);
}
