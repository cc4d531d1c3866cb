// The distributed bfs (verify/distributed_bfs.hpp) with threads standing in for MPI ranks: 1, 2
// and 3 ranks give the one-process search's verdict, figures and counterexample step for step.
// (The mpirun run of the real executable is tests/cli's.)
#include "verify/distributed_bfs.hpp"

#include <barrier>
#include <catch2/catch.hpp>
#include <thread>

#include "tests/verify/grid_world.hpp"
#include "tests/verify/parallel_bfs/same_result.hpp"
#include "verify/failover_invariants.hpp"

namespace {

using namespace railcheck;
using namespace railcheck::verify;
using testing::figures;
using testing::GridWorld;
using testing::small_failover_model;

// Ranks as threads of one process: every collective call meets at a barrier.
struct ThreadRanks {
  explicit ThreadRanks(int n) : ranks(n), sent(n), sync(n) {}
  int ranks;
  std::vector<std::vector<std::vector<std::uint64_t>>> sent;  // [from][to]
  std::barrier<> sync;
};

class ThreadRank final : public RankExchange {
 public:
  ThreadRank(ThreadRanks& all, int me) : all_(all), me_(me) {}
  int rank() const override { return me_; }
  int ranks() const override { return all_.ranks; }
  std::vector<std::vector<std::uint64_t>> all_to_all(const std::vector<std::vector<std::uint64_t>>& out) override {
    all_.sent[me_] = out;
    all_.sync.arrive_and_wait();
    std::vector<std::vector<std::uint64_t>> in;
    for (int from = 0; from < all_.ranks; ++from) in.push_back(all_.sent[from][me_]);
    all_.sync.arrive_and_wait();  // nobody sends again before everyone has read
    return in;
  }
  std::vector<std::vector<std::uint64_t>> all_gather(const std::vector<std::uint64_t>& mine) override {
    return all_to_all(std::vector<std::vector<std::uint64_t>>(all_.ranks, mine));
  }

 private:
  ThreadRanks& all_;
  int me_;
};

template <typename World>
SearchResult<World> same_on_every_rank_count(const World& root, std::span<const Invariant<World>> invs,
                                             SearchLimits lim) {
  lim.mode = SearchMode::Bfs;
  const auto one = explore<World>(root, invs, lim);
  for (const int n : {1, 2, 3}) {
    ThreadRanks all(n);
    std::vector<SearchResult<World>> results(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        ThreadRank me(all, r);
        results[r] = explore_distributed<World>(root, invs, lim, me);
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < n; ++r) {
      INFO(n << " ranks, rank " << r << ": " << figures(results[r]) << "\none process: " << figures(one));
      CHECK(figures(results[r]) == figures(one));
      if (one.violation && results[r].violation) CHECK(results[r].violation->steps == one.violation->steps);
    }
  }
  return one;
}

}  // namespace

TEST_CASE("distributed bfs gives the one-process figures and counterexample on the grid") {
  const GridWorld root{.limit = 30};
  const auto clean = same_on_every_rank_count<GridWorld>(root, {}, SearchLimits{});
  CHECK(clean.stats.distinct == 31 * 31);
  const auto invs = testing::never_reaches(17, 6);
  const auto bad = same_on_every_rank_count<GridWorld>(root, invs, SearchLimits{});
  REQUIRE(bad.violation);
  CHECK(bad.violation->steps.size() == 23);
  for (const std::uint64_t max_states : {1, 2, 50, 51, 52, 300}) {
    SearchLimits lim;
    lim.max_states = max_states;
    INFO("max_states " << max_states);
    same_on_every_rank_count<GridWorld>(root, invs, lim);
  }
  SearchLimits lim;
  lim.max_depth = 9;
  same_on_every_rank_count<GridWorld>(root, {}, lim);
}

TEST_CASE("distributed bfs gives the one-process result on the failover engine") {
  const auto clean = same_on_every_rank_count<FailoverWorld>(FailoverWorld(small_failover_model(ReplayPolicy::Resync)),
                                                             failover_invariants(), SearchLimits{});
  CHECK(clean.stats.exhausted);
  const auto naive = same_on_every_rank_count<FailoverWorld>(FailoverWorld(small_failover_model(ReplayPolicy::Naive)),
                                                             failover_invariants(), SearchLimits{});
  REQUIRE(naive.violation);
  CHECK(naive.violation->invariant == "exactly-once-in-order");
}
