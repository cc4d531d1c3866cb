// Depth-first search on several threads (verify/parallel_dfs.hpp, `--mode pdfs`): an exhausted
// run has the one-thread dfs's verdict and counts (distinct, states, end states) on 1, 2 and 4
// threads where the reduced graph does not depend on the visiting order (the grid, the failover
// world with --symmetry off); on one thread it is the dfs, figure for figure; with the symmetry
// reduction on the verdict is the dfs's; every seeded mutation is found with the symmetry
// reduction on, one way and both ways (one way only under the sanitizers), and its
// counterexample, a real run, replays. This binary
// links only the checker, so quickstart.sh runs it under ThreadSanitizer as well.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "tests/verify/grid_world.hpp"
#include "tests/verify/parallel_bfs/same_result.hpp"
#include "verify/counterexample.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_invariants.hpp"

namespace {

using namespace railcheck;
using namespace railcheck::verify;
using testing::figures;
using testing::GridWorld;
using testing::kMutationCases;
using testing::mutated;
using testing::small_failover_model;

// The figures of an exhausted run that do not depend on the visiting order.
template <typename World>
std::string order_free_figures(const SearchResult<World>& r) {
  const auto& s = r.stats;
  return fmt::format("states {} distinct {} end {} exhausted {} truncated_by '{}' violation {}", s.states, s.distinct,
                     s.end_states, s.exhausted, s.truncated_by, r.violation ? r.violation->invariant : "none");
}

template <typename World>
SearchResult<World> search_pdfs(const World& root, std::span<const Invariant<World>> invs, SearchLimits lim,
                                unsigned threads) {
  lim.mode = SearchMode::ParallelDfs;
  lim.threads = threads;
  return explore<World>(root, invs, lim);
}

// Runs the one-thread dfs and pdfs on 1, 2 and 4 threads: one thread is the dfs figure for figure
// (same order), and every thread count has its order-free figures.
template <typename World>
SearchResult<World> same_as_dfs(const World& root, std::span<const Invariant<World>> invs, SearchLimits lim = {}) {
  lim.mode = SearchMode::Dfs;
  const auto dfs = explore<World>(root, invs, lim);
  const auto one = search_pdfs(root, invs, lim, 1);
  INFO("pdfs on 1 thread: " << figures(one) << "\ndfs: " << figures(dfs));
  CHECK(figures(one) == figures(dfs));
  for (const unsigned threads : {2U, 4U}) {
    const auto many = search_pdfs(root, invs, lim, threads);
    INFO(threads << " threads: " << figures(many) << "\ndfs: " << figures(dfs));
    CHECK(order_free_figures(many) == order_free_figures(dfs));
  }
  return dfs;
}

FailoverWorld failover_root(const FailoverModel& m, bool symmetry) {
  FailoverWorld w(m);
  w.set_symmetry(symmetry);
  return w;
}

// The counterexample, written as a trace file and read back, replays to the same violation.
void check_replays(const FailoverModel& m, const Counterexample<FailoverWorld>& v,
                   std::span<const Invariant<FailoverWorld>> invs) {
  auto back = read_trace_json(write_trace_json({m, v.steps, v.invariant, v.message}), "memory");
  REQUIRE(back);
  auto replayed = replay_trace(back.value(), invs);
  REQUIRE(replayed);
  CHECK(replayed.value().invariant == std::optional<std::string>(v.invariant));
  CHECK(replayed.value().steps_run == v.steps.size());
}

// Both ways over 2 paths, 1 message each, 1 failure, 1 loss, 1 race (8 838 distinct states with
// symmetry off); without the loss under the sanitizers (2 717), where a state costs ~30x more.
FailoverModel small_both_ways() {
  FailoverModel m = small_failover_model(ReplayPolicy::Resync);
  m.bidirectional = true;
  m.messages = 1;
#ifdef RAILCHECK_SANITIZE
  m.losses = 0;
#endif
  return m;
}

// Both ways, a depth-first search may wander far before it meets the mutation (swallow-failure:
// ~220 000 states, ~9 CPU s at -O2), which is minutes under the sanitizers: one way only there,
// on 4 threads, and the failover counts under resync only.
#ifdef RAILCHECK_SANITIZE
constexpr bool kDirections[] = {false};
constexpr unsigned kOneWayThreads[] = {4};
constexpr ReplayPolicy kCountPolicies[] = {ReplayPolicy::Resync};
#else
constexpr bool kDirections[] = {false, true};
constexpr unsigned kOneWayThreads[] = {2, 4};
constexpr ReplayPolicy kCountPolicies[] = {ReplayPolicy::Resync, ReplayPolicy::Probe};
#endif

}  // namespace

TEST_CASE("pdfs exhausts the grid with the dfs counts on 1, 2 and 4 threads") {
  const auto r = same_as_dfs<GridWorld>(GridWorld{.limit = 40}, {});
  CHECK(r.stats.exhausted);
  CHECK(r.stats.distinct == 41 * 41);
  CHECK(r.stats.end_states == 1);
}

// A world that records which threads take its steps. A lost wake-up (the notice of work given
// away taken by the main thread, which watches the clock on the same condition variable, instead
// of the idle worker) once left a thread of every run idle: on 2 threads the search ran on one,
// with the right figures, so only this shows it.
template <typename World>
struct ThreadTracking : World {
  using ChoiceType = typename World::ChoiceType;
  explicit ThreadTracking(World w) : World(std::move(w)) {}
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
  std::shared_ptr<std::set<std::thread::id>> stepped = std::make_shared<std::set<std::thread::id>>();
  void apply(const ChoiceType& c) {
    World::apply(c);
    const std::lock_guard lock(*mutex);
    stepped->insert(std::this_thread::get_id());
  }
};

TEST_CASE("pdfs puts every thread to work") {
  // The full standard bound both ways, cut after half a second: the first thread's subtree is far
  // larger than that, so an idle thread that missed the first work given away would never get
  // another chance. (A bound small enough to exhaust hides the bug: the first thread soon runs
  // dry, gives again, and by then the main thread waits behind the idle one.)
  FailoverModel m = standard_bound(ReplayPolicy::Resync);
  m.bidirectional = true;
  FailoverWorld inner(m);
  inner.set_symmetry(true);
  const std::vector<Invariant<ThreadTracking<FailoverWorld>>> no_invariants;
  for (const unsigned threads : {2U, 4U}) {
    ThreadTracking<FailoverWorld> root(inner);
    SearchLimits lim;
    lim.mode = SearchMode::ParallelDfs;
    lim.threads = threads;
    lim.max_seconds = 0.5;
    const auto r = explore<ThreadTracking<FailoverWorld>>(root, no_invariants, lim);
    INFO(threads << " threads: " << figures(r));
    CHECK(r.stats.truncated_by == "max_seconds");
    CHECK(root.stepped->size() == threads);
  }
}

TEST_CASE("pdfs finds a violation on the grid and its path leads there") {
  const auto invs = testing::never_reaches(23, 9);
  for (const unsigned threads : {1U, 2U, 4U}) {
    const auto r = search_pdfs<GridWorld>(GridWorld{.limit = 40}, invs, SearchLimits{}, threads);
    INFO(threads << " threads: " << figures(r));
    REQUIRE(r.violation);
    GridWorld w{.limit = 40};
    for (const auto& c : r.violation->steps) w.apply(c);
    CHECK(w.x == 23);
    CHECK(w.y == 9);
    CHECK_FALSE(r.stats.exhausted);
  }
}

TEST_CASE("pdfs stops at max_states and max_depth and says so") {
  for (const unsigned threads : {1U, 2U, 4U}) {
    INFO(threads << " threads");
    for (const std::uint64_t max_states : {1, 2, 7, 100, 500}) {
      SearchLimits lim;
      lim.max_states = max_states;
      const auto r = search_pdfs<GridWorld>(GridWorld{.limit = 40}, {}, lim, threads);
      INFO("max_states " << max_states << ": " << figures(r));
      CHECK(r.stats.truncated_by == "max_states");
      CHECK_FALSE(r.stats.exhausted);
      CHECK(r.stats.distinct >= max_states);
    }
    SearchLimits lim;
    lim.max_depth = 12;
    const auto r = search_pdfs<GridWorld>(GridWorld{.limit = 40}, {}, lim, threads);
    CHECK(r.stats.truncated_by == "max_depth");
    CHECK_FALSE(r.stats.exhausted);
    CHECK(r.stats.max_depth <= 12);
  }
}

TEST_CASE("pdfs exhausts failover bounds with the dfs counts, one way and both ways, symmetry off") {
  for (const auto policy : kCountPolicies) {
    const auto r =
        same_as_dfs<FailoverWorld>(failover_root(small_failover_model(policy), false), failover_invariants());
    CHECK(r.stats.exhausted);
    CHECK(r.stats.distinct > 1000);
  }
  const FailoverModel both = small_both_ways();
  const auto r = same_as_dfs<FailoverWorld>(failover_root(both, false), failover_invariants());
  CHECK(r.stats.exhausted);
  CHECK(r.stats.distinct > 1000);
}

TEST_CASE("pdfs gives the dfs verdict with the symmetry reduction on") {
  // The counts may differ by the member of a class that is expanded (verify/parallel_dfs.hpp);
  // on one thread they are the dfs's.
  const FailoverModel both = small_both_ways();
  SearchLimits lim;
  lim.mode = SearchMode::Dfs;
  const auto dfs = explore<FailoverWorld>(failover_root(both, true), failover_invariants(), lim);
  REQUIRE(dfs.stats.exhausted);
  const auto one = search_pdfs<FailoverWorld>(failover_root(both, true), failover_invariants(), lim, 1);
  CHECK(figures(one) == figures(dfs));
  for (const unsigned threads : {2U, 4U}) {
    const auto r = search_pdfs<FailoverWorld>(failover_root(both, true), failover_invariants(), lim, threads);
    INFO(threads << " threads: " << figures(r) << "\ndfs: " << figures(dfs));
    CHECK(r.stats.exhausted);
    CHECK_FALSE(r.violation);
  }
}

TEST_CASE("pdfs finds the naive rule's duplicate and every seeded mutation, and each counterexample replays") {
  std::vector<std::pair<std::string, FailoverModel>> models;
  models.emplace_back("exactly-once-in-order", small_failover_model(ReplayPolicy::Naive));
  for (const auto& c : kMutationCases) models.emplace_back(c.invariant, mutated(c));
  FailoverModel early_rto = small_failover_model(ReplayPolicy::Resync);
  early_rto.tunables.soft_rto = ms(100);  // below the HCA's 537 ms retry window
  models.emplace_back("failover-after-hardware-window", early_rto);
  const auto all = failover_invariants();
  for (auto [invariant, m] : models) {
    // The invariant aimed at alone: a depth-first search may meet another violation first.
    std::vector<Invariant<FailoverWorld>> aimed;
    for (const auto& inv : all)
      if (inv.name == invariant) aimed.push_back(inv);
    REQUIRE(aimed.size() == 1);
    for (const bool both : kDirections) {
      m.bidirectional = both;
      for (const unsigned threads : both
                                        ? std::vector<unsigned>{4}
                                        : std::vector<unsigned>(std::begin(kOneWayThreads), std::end(kOneWayThreads))) {
        const auto r = search_pdfs<FailoverWorld>(failover_root(m, true), aimed, SearchLimits{}, threads);
        INFO(to_string(m.mutation) << " " << to_string(m.tunables.replay) << (both ? ", both ways, " : ", one way, ")
                                   << threads << " threads: " << figures(r));
        REQUIRE(r.violation);
        CHECK(r.violation->invariant == invariant);
        check_replays(m, *r.violation, aimed);
      }
    }
  }
}
