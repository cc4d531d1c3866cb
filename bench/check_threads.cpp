// Model-checker speed-up with threads: the standard bound one way (standard-resync) and the
// both-ways model (bidirectional.toml's bound) searched on each thread count given, side by side
// in one run, with distinct states per second of wall time and the speed-up over the first count.
// The threaded bfs (verify/parallel_bfs.hpp) must give the first run's figures whatever the
// threads; the parallel dfs (verify/parallel_dfs.hpp) its order-free ones (states, distinct, end
// states) where the reduced graph does not depend on the order (symmetry off); a row that
// differs says so.
//   build/bench/check_threads 1 2 4 8 16                       bfs, symmetry off
//   build/bench/check_threads --mode pdfs --symmetry on 1 16
//   build/bench/check_threads --full 120 16 pdfs on     the full standard bound both ways, 120 s
//                                                       at most, 16 threads, pdfs, symmetry on
// The full run prints a progress line every 10 s (distinct states, depth, rate, resident memory)
// so that a run killed from outside still says how far it got.
#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/machine_line.hpp"
#include "verify/check_spec.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_invariants.hpp"

using namespace railcheck;
using namespace railcheck::verify;

namespace {

struct Setup {
  SearchMode mode = SearchMode::Bfs;
  bool symmetry = false;
};

// Resident memory now and at its peak, in GiB (/proc/self/status).
std::pair<double, double> rss_gib() {
  std::ifstream status("/proc/self/status");
  double now = 0, peak = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) now = std::strtod(line.c_str() + 6, nullptr) / (1 << 20);
    if (line.rfind("VmHWM:", 0) == 0) peak = std::strtod(line.c_str() + 6, nullptr) / (1 << 20);
  }
  return {now, peak};
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

SearchResult<FailoverWorld> search(const FailoverModel& m, const Setup& setup, unsigned threads, double max_seconds,
                                   const ProgressFn<FailoverWorld>& progress = {}) {
  SearchLimits lim;
  lim.mode = setup.mode;
  lim.threads = threads;
  lim.max_seconds = max_seconds;
  lim.max_states = 100'000'000'000;
  lim.max_depth = 1000;
  lim.progress_every = progress ? 1 << 16 : 0;  // the threaded searches report every 100 ms anyway
  FailoverWorld root(m);
  root.set_symmetry(setup.symmetry);
  return explore<FailoverWorld>(root, failover_invariants(), lim, progress);
}

std::string verdict(const SearchResult<FailoverWorld>& r) {
  if (r.violation) return "violation: " + r.violation->invariant;
  return r.stats.exhausted ? "exhausted, clean" : "stopped at " + r.stats.truncated_by;
}

void sweep(const std::string& label, const FailoverModel& m, const Setup& setup, const std::vector<unsigned>& threads) {
  double base = 0;
  SearchStats first;
  for (const unsigned t : threads) {
    const auto r = search(m, setup, t, 0);
    const auto& s = r.stats;
    if (base == 0) {
      base = s.distinct_per_second();
      first = s;
    }
    const bool same = s.states == first.states && s.distinct == first.distinct && s.end_states == first.end_states &&
                      (setup.mode != SearchMode::Bfs || s.max_depth == first.max_depth);
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

int full(double seconds, unsigned threads, const Setup& setup) {
  FailoverModel m = standard_bound(ReplayPolicy::Resync);
  m.bidirectional = true;
  double last = 0;
  const auto r = search(m, setup, threads, seconds, [&](const SearchStats& s) {
    if (s.seconds - last < 10) return;
    last = s.seconds;
    const auto [now, peak] = rss_gib();
    fmt::print("  {:.0f} s: {} states, {} distinct, depth {}, {:.0f} distinct/s, {} pending, RSS {:.2f} GiB\n",
               s.seconds, s.states, s.distinct, s.max_depth, s.distinct_per_second(), s.pending, now);
    std::fflush(stdout);
  });
  const auto& s = r.stats;
  const auto [now, peak] = rss_gib();
  const double cpu = cpu_seconds();
  fmt::print(
      "full standard bound both ways ({}), {} on {} threads, symmetry {}: {} states, {} distinct, {} end states, "
      "depth {}, {:.1f} s, {:.0f} distinct/s, {:.0f} states/s, {:.0f} CPU s ({:.0f} states per CPU s), peak RSS "
      "{:.2f} GiB: {}\n",
      describe(m), to_string(setup.mode), threads, setup.symmetry ? "on" : "off", s.states, s.distinct, s.end_states,
      s.max_depth, s.seconds, s.distinct_per_second(), s.states_per_second(), cpu,
      cpu > 0 ? static_cast<double>(s.states) / cpu : 0.0, peak, verdict(r));
  return r.violation ? 1 : 0;
}

SearchMode mode_of(const std::string& s) {
  if (s == "pdfs") return SearchMode::ParallelDfs;
  if (s == "dfs") return SearchMode::Dfs;
  return SearchMode::Bfs;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Setup setup;
  if (args.size() >= 3 && args[0] == "--full") {
    if (args.size() >= 4) setup.mode = mode_of(args[3]);
    setup.symmetry = args.size() >= 5 && args[4] == "on";
    fmt::print("check_threads: {}\n\n", bench::machine_summary());
    return full(std::strtod(args[1].c_str(), nullptr),
                static_cast<unsigned>(std::strtoul(args[2].c_str(), nullptr, 10)), setup);
  }
  std::vector<unsigned> threads;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--mode" && i + 1 < args.size()) {
      setup.mode = mode_of(args[++i]);
    } else if (args[i] == "--symmetry" && i + 1 < args.size()) {
      setup.symmetry = args[++i] == "on";
    } else {
      threads.push_back(static_cast<unsigned>(std::strtoul(args[i].c_str(), nullptr, 10)));
    }
  }
  if (threads.empty()) threads = {1, 2};
  fmt::print("check_threads: {}; {}, symmetry {}\n\n", bench::machine_summary(), to_string(setup.mode),
             setup.symmetry ? "on" : "off");
  fmt::print("| model | threads | states | distinct | depth | seconds | distinct/s | speed-up | result |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|\n");
  FailoverModel one_way = standard_bound(ReplayPolicy::Resync);
  one_way.bidirectional = false;
  sweep("standard-resync (one way)", one_way, setup, threads);
  sweep("bidirectional (both ways, smaller bound)", both_ways_small(), setup, threads);
  return 0;
}
