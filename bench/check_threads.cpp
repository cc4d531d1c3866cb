// Model-checker speed-up with threads: the breadth-first search (verify/parallel_bfs.hpp) of the
// standard bound one way (standard-resync) and of the both-ways model (bidirectional.toml's
// bound) on each thread count given, side by side in one run, with distinct states per second
// of wall time and the speed-up over the first count. Every run must give the first run's figures
// (the result does not depend on the threads); a row that differs says so.
//   build/bench/check_threads 1 2 4 8 16
//   build/bench/check_threads --full 120 16     the full standard bound both ways, 120 s at most
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "bench/machine_line.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_invariants.hpp"

using namespace railcheck;
using namespace railcheck::verify;

namespace {

SearchResult<FailoverWorld> search(const FailoverModel& m, unsigned threads, double max_seconds) {
  SearchLimits lim;
  lim.mode = SearchMode::Bfs;
  lim.threads = threads;
  lim.max_seconds = max_seconds;
  lim.max_states = 1'000'000'000;
  lim.max_depth = 1000;
  return explore<FailoverWorld>(FailoverWorld(m), failover_invariants(), lim);
}

std::string verdict(const SearchResult<FailoverWorld>& r) {
  if (r.violation) return "violation: " + r.violation->invariant;
  return r.stats.exhausted ? "exhausted, clean" : "stopped at " + r.stats.truncated_by;
}

void sweep(const std::string& label, const FailoverModel& m, const std::vector<unsigned>& threads) {
  double base = 0;
  SearchStats first;
  for (const unsigned t : threads) {
    const auto r = search(m, t, 0);
    const auto& s = r.stats;
    if (base == 0) {
      base = s.distinct_per_second();
      first = s;
    }
    const bool same = s.states == first.states && s.distinct == first.distinct && s.end_states == first.end_states &&
                      s.max_depth == first.max_depth;
    fmt::print("| {} | {} | {} | {} | {} | {:.2f} | {:.0f} | {:.2f} | {}{} |\n", label, t, s.states, s.distinct,
               s.max_depth, s.seconds, s.distinct_per_second(), s.distinct_per_second() / base, verdict(r),
               same ? "" : " (FIGURES DIFFER from the first row)");
    std::fflush(stdout);
  }
}

FailoverModel both_ways_small() {
  FailoverModel m = standard_bound(ReplayPolicy::Resync);
  m.bidirectional = true;
  m.paths = 2;
  m.messages = 2;
  m.link_failures = 1;
  m.losses = 1;
  m.timer_races = 1;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  fmt::print("check_threads: {}; bfs\n\n", bench::machine_summary());
  if (argc == 4 && std::string(argv[1]) == "--full") {
    FailoverModel m = standard_bound(ReplayPolicy::Resync);
    m.bidirectional = true;
    const auto threads = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
    const auto r = search(m, threads, std::strtod(argv[2], nullptr));
    const auto& s = r.stats;
    fmt::print(
        "full standard bound both ways ({}), {} threads: {} states, {} distinct, depth {}, {:.1f} s, "
        "{:.0f} distinct/s: {}\n",
        describe(m), threads, s.states, s.distinct, s.max_depth, s.seconds, s.distinct_per_second(), verdict(r));
    return 0;
  }
  std::vector<unsigned> threads;
  for (int i = 1; i < argc; ++i) threads.push_back(static_cast<unsigned>(std::strtoul(argv[i], nullptr, 10)));
  if (threads.empty()) threads = {1, 2};
  fmt::print("| model | threads | states | distinct | depth | seconds | distinct/s | speed-up | result |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|\n");
  FailoverModel one_way = standard_bound(ReplayPolicy::Resync);
  one_way.bidirectional = false;
  sweep("standard-resync (one way)", one_way, threads);
  sweep("bidirectional (both ways, smaller bound)", both_ways_small(), threads);
  return 0;
}
