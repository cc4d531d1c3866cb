// railcheck check: explore the failover world of a model (or scenario) file and report.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "verify/check_spec.hpp"
#include "verify/counterexample.hpp"
#include "verify/failover_invariants.hpp"

namespace railcheck::cli {
namespace {

using namespace railcheck::verify;

int list_invariants() {
  for (const auto& inv : failover_invariants()) fmt::print("{:<32} {}\n", inv.name, inv.description);
  return kExitOk;
}

bool write_text(const std::string& path, const std::string& text) {
  if (path == "-") {
    fmt::print("{}", text);
    return true;
  }
  std::ofstream f(path);
  f << text;
  f.close();  // flushes: a full disk shows here, not as a silently short file
  return !f.fail();
}

// The figures a progress line and the final line share (and --json holds under the same names).
std::string figures(const SearchStats& s) {
  return fmt::format("{} states ({} distinct), depth {}, {:.2f} s, {:.0f} states/s ({:.0f} distinct/s)", s.states,
                     s.distinct, s.max_depth, s.seconds, s.states_per_second(), s.distinct_per_second());
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

int cmd_check(const CheckOptions& o) {
  if (o.list_invariants) return list_invariants();
  if (o.file.empty()) {
    fmt::print(stderr, "railcheck check: a model or scenario file is required (see verify/models/)\n");
    return kExitBadInput;
  }
  auto loaded = load_check_spec_file(o.file);
  if (!loaded) {
    fmt::print(stderr, "railcheck check: {}\n", loaded.error().message());
    return kExitBadInput;
  }
  CheckSpec spec = loaded.value();
  if (!o.policy.empty()) {
    const auto p = parse_replay_policy(o.policy);
    if (!p) {
      fmt::print(stderr, "railcheck check: --policy {}: expected naive, probe or resync\n", o.policy);
      return kExitBadInput;
    }
    spec.model.tunables.replay = *p;
  }
  if (!o.mode.empty()) {
    if (o.mode != "dfs" && o.mode != "bfs" && o.mode != "random") {
      fmt::print(stderr, "railcheck check: --mode {}: expected dfs, bfs or random\n", o.mode);
      return kExitBadInput;
    }
    spec.limits.mode = parse_search_mode_or(o.mode, spec.limits.mode);
  }
  if (o.max_states) spec.limits.max_states = *o.max_states;
  if (o.max_depth) spec.limits.max_depth = *o.max_depth;
  if (o.max_seconds) spec.limits.max_seconds = *o.max_seconds;
  if (o.walks) spec.limits.walks = *o.walks;
  if (o.seed) spec.limits.seed = *o.seed;
  // Options a dfs/bfs search cannot use are refused, not ignored.
  if ((o.walks || o.seed) && spec.limits.mode != SearchMode::Random) {
    fmt::print(stderr, "railcheck check: {} applies to --mode random only (this search is {})\n",
               o.walks ? "--walks" : "--seed", to_string(spec.limits.mode));
    return kExitBadInput;
  }
  if (o.max_states && *o.max_states == 0) {
    fmt::print(stderr, "railcheck check: --max-states 0 explores nothing; give at least 1\n");
    return kExitBadInput;
  }

  std::vector<std::string> unknown;
  const auto invariants = select_invariants<FailoverWorld>(failover_invariants(), spec.invariants, unknown);
  fmt::print("railcheck check {}: {}\n", spec.model.name, describe(spec.model));
  fmt::print("search: {}, up to {} states, depth {}{}; invariants: {}\n", to_string(spec.limits.mode),
             spec.limits.max_states, spec.limits.max_depth,
             spec.limits.mode == SearchMode::Random
                 ? fmt::format(", {} walks from seed {}", spec.limits.walks, spec.limits.seed)
                 : "",
             spec.invariants.empty() ? "all" : fmt::format("{}", fmt::join(spec.invariants, ", ")));

  // Progress: a line every ~2 s of wall time when asked, or when stderr is a terminal.
  const bool show_progress = o.progress || isatty(STDERR_FILENO) != 0;
  spec.limits.progress_every = show_progress ? 20000 : 0;
  auto last = std::chrono::steady_clock::now();
  auto progress = [&](const SearchStats& s) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(2)) return;
    last = now;
    const double cap = s.seconds_to_cap(spec.limits.max_states);
    fmt::print(stderr, "  ... {}; {} pending, --max-states {} in at most {}\n", figures(s), s.pending,
               spec.limits.max_states, std::isfinite(cap) ? fmt::format("{:.0f} s", cap) : std::string("?"));
  };
  const double cpu0 = cpu_seconds();
  const FailoverWorld root(spec.model);
  const auto result = explore<FailoverWorld>(root, invariants, spec.limits, progress);
  const SearchStats& st = result.stats;
  const double cpu = cpu_seconds() - cpu0;
  fmt::print("explored {}, {} end states, {:.2f} s CPU\n", figures(st), st.end_states, cpu);

  nlohmann::json j{{"model", spec.model.name},
                   {"description", describe(spec.model)},
                   {"mode", std::string(to_string(spec.limits.mode))},
                   {"states", st.states},
                   {"distinct_states", st.distinct},
                   {"end_states", st.end_states},
                   {"max_depth", st.max_depth},
                   {"seconds", st.seconds},
                   {"states_per_second", st.states_per_second()},
                   {"distinct_per_second", st.distinct_per_second()},
                   {"cpu_seconds", cpu},
                   {"exhausted", st.exhausted}};
  if (!st.exhausted && !result.violation) j["stopped_by"] = st.truncated_by;
  int rc = kExitOk;
  if (result.violation) {
    const auto& v = *result.violation;
    FailoverTrace trace{spec.model, v.steps, v.invariant, v.message};
    fmt::print("VIOLATION of {}: {}\n", v.invariant, v.message);
    if (v.walk) fmt::print("found by random walk {} of seed {}\n", *v.walk, spec.limits.seed);
    fmt::print("counterexample, {} steps:\n", v.steps.size());
    if (auto replayed = replay_trace(trace, invariants)) {
      for (const auto& line : replayed.value().lines) fmt::print("{}\n", line);
    }
    if (write_text(o.trace_path, write_trace_json(trace))) {
      fmt::print("trace written to {}; replay it with: railcheck replay {}\n", o.trace_path, o.trace_path);
    } else {
      fmt::print(stderr, "railcheck check: cannot write the trace to {}\n", o.trace_path);
    }
    j["violation"] = {{"invariant", v.invariant}, {"message", v.message}, {"steps", v.steps.size()}};
    rc = kExitViolation;
  } else if (st.exhausted) {
    fmt::print("bound exhausted: no invariant violated\n");
  } else if (spec.limits.mode == SearchMode::Random && st.truncated_by == "random walks") {
    fmt::print("no violation in {} random walks (sampled, not exhaustive)\n", spec.limits.walks);
  } else {
    fmt::print("NOT exhausted: stopped at {} (raise it with --max-states / --max-depth / --max-seconds); no "
               "violation so far\n",
               st.truncated_by);
    rc = kExitInconclusive;
  }
  if (!o.json_path.empty() && !write_text(o.json_path, j.dump(2) + "\n")) {
    fmt::print(stderr, "railcheck check: cannot write {}\n", o.json_path);
    return kExitBadInput;
  }
  return rc;
}

}  // namespace railcheck::cli
