// Breadth-first search on several threads (verify/parallel_bfs.hpp) gives the one-thread
// search's verdict, figures and shortest counterexample step for step, whatever the thread
// count: on the toy grid (clean, violated, cut by max_states and max_depth) and on the real
// failover engine (a clean bound, the naive replay rule, a broken engine variant). Its own test
// binary links only the checker, so quickstart.sh runs it under ThreadSanitizer as well.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/verify/grid_world.hpp"
#include "tests/verify/parallel_bfs/same_result.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_invariants.hpp"

namespace {

using namespace railcheck;
using namespace railcheck::verify;
using testing::figures;
using testing::GridWorld;
using testing::small_failover_model;

// Runs `lim` on 1, 2, 3 and 4 threads and checks every run against the one-thread search.
template <typename World>
SearchResult<World> same_on_every_thread_count(const World& root, std::span<const Invariant<World>> invs,
                                               SearchLimits lim) {
  lim.mode = SearchMode::Bfs;
  lim.threads = 1;
  const auto one = explore<World>(root, invs, lim);
  for (const unsigned threads : {2U, 3U, 4U}) {
    lim.threads = threads;
    const auto many = explore<World>(root, invs, lim);
    INFO(threads << " threads: " << figures(many) << "\n1 thread: " << figures(one));
    CHECK(figures(many) == figures(one));
    if (one.violation && many.violation) CHECK(many.violation->steps == one.violation->steps);
  }
  return one;
}

}  // namespace

TEST_CASE("threaded bfs exhausts the grid with the one-thread figures") {
  const GridWorld root{.limit = 40};
  const auto r = same_on_every_thread_count<GridWorld>(root, {}, SearchLimits{});
  CHECK(r.stats.exhausted);
  CHECK(r.stats.distinct == 41 * 41);
  CHECK(r.stats.end_states == 1);
}

TEST_CASE("threaded bfs finds the one-thread shortest counterexample on the grid") {
  const auto invs = testing::never_reaches(23, 9);
  const auto r = same_on_every_thread_count<GridWorld>(GridWorld{.limit = 40}, invs, SearchLimits{});
  REQUIRE(r.violation);
  CHECK(r.violation->steps.size() == 32);
}

TEST_CASE("threaded bfs stops at max_states and max_depth where one thread does") {
  for (const std::uint64_t max_states : {1, 2, 7, 100, 500}) {
    SearchLimits lim;
    lim.max_states = max_states;
    INFO("max_states " << max_states);
    const auto r = same_on_every_thread_count<GridWorld>(GridWorld{.limit = 40}, {}, lim);
    CHECK(r.stats.truncated_by == "max_states");
  }
  SearchLimits lim;
  lim.max_depth = 12;
  const auto r = same_on_every_thread_count<GridWorld>(GridWorld{.limit = 40}, {}, lim);
  CHECK(r.stats.truncated_by == "max_depth");
  // A violation and the max_states cut in the same level: the one met first wins.
  lim = SearchLimits{};
  const auto invs = testing::never_reaches(3, 4);
  for (const std::uint64_t max_states : {30, 31, 32, 33, 34, 40}) {
    lim.max_states = max_states;
    INFO("max_states " << max_states);
    same_on_every_thread_count<GridWorld>(GridWorld{.limit = 40}, invs, lim);
  }
}

TEST_CASE("threaded bfs exhausts a failover bound with the one-thread figures") {
  const FailoverModel m = small_failover_model(ReplayPolicy::Resync);
  const auto r = same_on_every_thread_count<FailoverWorld>(FailoverWorld(m), failover_invariants(), SearchLimits{});
  CHECK(r.stats.exhausted);
  CHECK(r.stats.distinct > 1000);
}

TEST_CASE("threaded bfs finds the naive rule's duplicate and a broken variant's bug as one thread does") {
  const auto naive = same_on_every_thread_count<FailoverWorld>(FailoverWorld(small_failover_model(ReplayPolicy::Naive)),
                                                               failover_invariants(), SearchLimits{});
  REQUIRE(naive.violation);
  CHECK(naive.violation->invariant == "exactly-once-in-order");
  FailoverModel m = small_failover_model(ReplayPolicy::Probe);
  m.mutation = Mutation::ReplaySwapped;
  const auto swapped =
      same_on_every_thread_count<FailoverWorld>(FailoverWorld(m), failover_invariants(), SearchLimits{});
  REQUIRE(swapped.violation);
  CHECK(swapped.violation->invariant == "exactly-once-in-order");
}
