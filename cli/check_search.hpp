#pragma once
// What `railcheck check` does the same for every world (failover, plan-channels,
// plan-lifecycle, imm): the command-line bounds over the model file's, the header lines, the
// progress line, the search, the verdict and its exit code, --json, and the counterexample
// trace file. Each world supplies its root state, its invariants, a one-line description, and
// how to print and record a counterexample.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "backends/sim/sweep/mpi_sweep.hpp"
#include "cli/cli_output.hpp"
#include "cli/commands.hpp"
#include "cli/mpi_ranks.hpp"
#include "engine/core/result.hpp"
#include "verify/check_spec.hpp"
#include "verify/distributed_bfs.hpp"
#include "verify/explorer.hpp"

namespace railcheck::cli {

// Applies --mode, --max-states, --max-depth, --max-seconds, --walks, --seed and --threads over
// the model file's [search]; returns the bad-input line, or nothing. Options a search cannot use
// are refused, not ignored.
inline std::optional<std::string> apply_search_options(const CheckOptions& o, verify::SearchLimits& l) {
  using verify::SearchMode;
  if (!o.mode.empty()) {
    if (o.mode != "dfs" && o.mode != "bfs" && o.mode != "random" && o.mode != "pdfs")
      return fmt::format("--mode {}: expected dfs, bfs, random or pdfs", o.mode);
    l.mode = verify::parse_search_mode_or(o.mode, l.mode);
  }
  if (o.max_states) l.max_states = *o.max_states;
  if (o.max_depth) l.max_depth = *o.max_depth;
  if (o.max_seconds) l.max_seconds = *o.max_seconds;
  if (o.walks) l.walks = *o.walks;
  if (o.seed) l.seed = *o.seed;
  if ((o.walks || o.seed) && l.mode != SearchMode::Random)
    return fmt::format("{} applies to --mode random only (this search is {})", o.walks ? "--walks" : "--seed",
                       verify::to_string(l.mode));
  if (o.max_states && *o.max_states == 0) return "--max-states 0 explores nothing; give at least 1";
  if (auto bad = check_threads_error(o, l.mode == SearchMode::Bfs || l.mode == SearchMode::ParallelDfs)) return bad;
  if (o.threads) l.threads = *o.threads;
  return std::nullopt;
}

// One world's job for run_check.
template <typename World>
struct CheckJob {
  std::string world;        // "failover", "plan-channels", ...
  std::string name;         // the model's name
  std::string description;  // one line
  verify::SearchLimits limits;
  std::vector<std::string> invariant_names;  // as selected; empty: all
  std::span<const verify::Invariant<World>> invariants;
  // The counterexample, step by step (printed after the VIOLATION line).
  std::function<std::vector<std::string>(const verify::Counterexample<World>&)> explain;
  // The trace file's text.
  std::function<std::string(const verify::Counterexample<World>&)> trace;
  // Whether the world's symmetry reduction is on; nothing for a world without one (then
  // --symmetry is refused).
  std::optional<bool> symmetry;
};

// --symmetry: on (also when not given) or off; the bad-input line otherwise.
inline Result<bool> symmetry_option(const CheckOptions& o) {
  if (o.symmetry.empty() || o.symmetry == "on") return true;
  if (o.symmetry == "off") return false;
  return Error{fmt::format("--symmetry {}: expected on or off", o.symmetry), ""};
}

namespace detail {

// The figures a progress line and the final line share (and --json holds under the same names).
inline std::string figures(const verify::SearchStats& s) {
  return fmt::format("{} states ({} distinct), depth {}, {:.2f} s, {:.0f} states/s ({:.0f} distinct/s)", s.states,
                     s.distinct, s.max_depth, s.seconds, s.states_per_second(), s.distinct_per_second());
}

inline double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace detail

template <typename World>
int run_check(const CheckOptions& o, CheckJob<World> job, const World& root) {
  using verify::SearchMode;
  auto& lim = job.limits;
  if (!job.symmetry && !o.symmetry.empty()) {
    fmt::print(
        stderr,
        "railcheck check: --symmetry applies to the failover world only (the {} world has no symmetry reduction)\n",
        job.world);
    return kExitBadInput;
  }
  // Under mpirun with more than one rank the bfs is spread over the ranks
  // (verify/distributed_bfs.hpp); rank 0 alone prints and writes files, and every rank exits
  // with the same code.
  std::unique_ptr<verify::RankExchange> ranks;
  if (sweep::started_by_mpirun()) {
    const char* bad = lim.mode != SearchMode::Bfs ? "under mpirun, railcheck check needs --mode bfs"
                      : lim.threads > 1           ? "under mpirun each rank runs one thread: drop --threads"
                                                  : nullptr;
    if (bad != nullptr) {
      fmt::print(stderr, "railcheck check: {}\n", bad);
      return kExitBadInput;
    }
    auto opened = open_mpi_ranks();
    if (!opened) {
      fmt::print(stderr, "railcheck check: {}\n", opened.error().message());
      return kExitBadInput;
    }
    ranks = std::move(opened.value());
    if (ranks->ranks() == 1) ranks.reset();
  }
  const bool speaker = !ranks || ranks->rank() == 0;
  if (!speaker && std::freopen("/dev/null", "w", stdout) == nullptr) return kExitInternal;
  fmt::print("railcheck check {}: {}\n", job.name, job.description);
  const std::string symmetry = job.symmetry ? fmt::format(", symmetry {}", *job.symmetry ? "on" : "off") : "";
  fmt::print("search: {}, up to {} states, depth {}{}{}{}; invariants: {}\n", verify::to_string(lim.mode),
             lim.max_states, lim.max_depth,
             lim.mode == SearchMode::Random ? fmt::format(", {} walks from seed {}", lim.walks, lim.seed) : "",
             lim.threads > 1 ? fmt::format(", {} threads", lim.threads)
             : ranks         ? fmt::format(", {} ranks", ranks->ranks())
                             : "",
             symmetry, job.invariant_names.empty() ? "all" : fmt::format("{}", fmt::join(job.invariant_names, ", ")));

  // Progress: a line every ~2 s of wall time when asked, or when stderr is a terminal.
  const bool show_progress = speaker && (o.progress || isatty(STDERR_FILENO) != 0);
  lim.progress_every = show_progress ? 20000 : 0;
  auto last = std::chrono::steady_clock::now();
  auto progress = [&](const verify::SearchStats& s) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(2)) return;
    last = now;
    const double cap = s.seconds_to_cap(lim.max_states);
    fmt::print(stderr, "  ... {}; {} pending, --max-states {} in at most {}\n", detail::figures(s), s.pending,
               lim.max_states, std::isfinite(cap) ? fmt::format("{:.0f} s", cap) : std::string("?"));
  };
  const double cpu0 = detail::cpu_seconds();
  const auto result = ranks ? verify::explore_distributed<World>(root, job.invariants, lim, *ranks, progress)
                            : verify::explore<World>(root, job.invariants, lim, progress);
  const verify::SearchStats& st = result.stats;
  const double cpu = detail::cpu_seconds() - cpu0;
  fmt::print("explored {}, {} end states, {:.2f} s CPU{}\n", detail::figures(st), st.end_states, cpu, symmetry);

  nlohmann::json j{{"world", job.world},
                   {"model", job.name},
                   {"description", job.description},
                   {"mode", std::string(verify::to_string(lim.mode))},
                   {"threads", lim.threads},
                   {"ranks", ranks ? ranks->ranks() : 1},
                   {"states", st.states},
                   {"distinct_states", st.distinct},
                   {"end_states", st.end_states},
                   {"max_depth", st.max_depth},
                   {"seconds", st.seconds},
                   {"states_per_second", st.states_per_second()},
                   {"distinct_per_second", st.distinct_per_second()},
                   {"cpu_seconds", cpu},
                   {"exhausted", st.exhausted}};
  if (job.symmetry) j["symmetry"] = *job.symmetry;
  if (!st.exhausted && !result.violation) j["stopped_by"] = st.truncated_by;
  int rc = kExitOk;
  if (result.violation) {
    const auto& v = *result.violation;
    fmt::print("VIOLATION of {}: {}\n", v.invariant, v.message);
    if (v.walk) fmt::print("found by random walk {} of seed {}\n", *v.walk, lim.seed);
    fmt::print("counterexample, {} steps:\n", v.steps.size());
    for (const auto& line : job.explain(v)) fmt::print("{}\n", line);
    if (speaker) {
      if (write_text(o.trace_path, job.trace(v))) {
        fmt::print("trace written to {}; replay it with: railcheck replay {}\n", o.trace_path, o.trace_path);
      } else {
        fmt::print(stderr, "railcheck check: cannot write the trace to {}\n", o.trace_path);
      }
    }
    j["violation"] = {{"invariant", v.invariant}, {"message", v.message}, {"steps", v.steps.size()}};
    rc = kExitViolation;
  } else if (st.exhausted) {
    fmt::print("bound exhausted: no invariant violated\n");
  } else if (lim.mode == SearchMode::Random && st.truncated_by == "random walks") {
    fmt::print("no violation in {} random walks (sampled, not exhaustive)\n", lim.walks);
  } else {
    fmt::print(
        "NOT exhausted: stopped at {} (raise it with --max-states / --max-depth / --max-seconds); no "
        "violation so far\n",
        st.truncated_by);
    rc = kExitInconclusive;
  }
  if (speaker && !o.json_path.empty() && !write_text(o.json_path, j.dump(2) + "\n")) {
    fmt::print(stderr, "railcheck check: cannot write {}\n", o.json_path);
    return kExitBadInput;
  }
  return rc;
}

}  // namespace railcheck::cli
