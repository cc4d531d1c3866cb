// railcheck check: explore the world of a model (or scenario) file and report. The failover
// world is here; the others (a model file with world = "...") are in cli/cmd_check_*.cpp, and
// what every world shares is cli/check_search.hpp.
#include <fmt/format.h>

#include "cli/check_search.hpp"
#include "cli/commands.hpp"
#include "verify/check_spec.hpp"
#include "verify/counterexample.hpp"
#include "verify/failover_invariants.hpp"

namespace railcheck::cli {
namespace {

using namespace railcheck::verify;

int list_invariants() {
  for (const auto& inv : failover_invariants()) fmt::print("{:<32} {}\n", inv.name, inv.description);
  list_world_invariants();
  list_zerobuf_invariants();
  return kExitOk;
}

}  // namespace

// Only the breadth-first search (whose levels make the whole result independent of the thread
// count: verify/parallel_bfs.hpp) and the parallel depth-first search (verify/parallel_dfs.hpp)
// run on several threads. A dfs or random search asked for threads is refused rather than
// silently run on one.
std::optional<std::string> check_threads_error(const CheckOptions& o, bool threaded) {
  constexpr unsigned kMaxThreads = 1024;
  if (!o.threads) return std::nullopt;
  if (*o.threads == 0) return "--threads 0: give at least 1";
  if (*o.threads > kMaxThreads) return fmt::format("--threads {}: at most {}", *o.threads, kMaxThreads);
  if (*o.threads > 1 && !threaded)
    return fmt::format(
        "--threads {} needs --mode bfs or pdfs: only the breadth-first search (shortest counterexample) and the "
        "parallel depth-first search (least memory) run on several threads",
        *o.threads);
  return std::nullopt;
}

int cmd_check(const CheckOptions& o) {
  if (o.list_invariants) return list_invariants();
  if (o.file.empty()) {
    fmt::print(stderr, "railcheck check: a model or scenario file is required (see verify/models/)\n");
    return kExitBadInput;
  }
  if (auto rc = check_named_world(o)) return *rc;
  if (is_zerobuf_model_file(o.file)) return cmd_check_zerobuf(o);
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
  if (auto bad = apply_search_options(o, spec.limits)) {
    fmt::print(stderr, "railcheck check: {}\n", *bad);
    return kExitBadInput;
  }
  const auto symmetry = symmetry_option(o);
  if (!symmetry) {
    fmt::print(stderr, "railcheck check: {}\n", symmetry.error().what);
    return kExitBadInput;
  }
  std::vector<std::string> unknown;
  const auto invariants = select_invariants<FailoverWorld>(failover_invariants(), spec.invariants, unknown);
  CheckJob<FailoverWorld> job;
  job.world = "failover";
  job.name = spec.model.name;
  job.description = describe(spec.model);
  job.limits = spec.limits;
  job.invariant_names = spec.invariants;
  job.invariants = invariants;
  auto trace_of = [&](const Counterexample<FailoverWorld>& v) {
    return FailoverTrace{spec.model, v.steps, v.invariant, v.message};
  };
  job.explain = [&](const Counterexample<FailoverWorld>& v) {
    auto replayed = replay_trace(trace_of(v), invariants);
    return replayed ? replayed.value().lines : std::vector<std::string>{};
  };
  job.trace = [&](const Counterexample<FailoverWorld>& v) { return write_trace_json(trace_of(v)); };
  job.symmetry = symmetry.value();
  FailoverWorld root(spec.model);
  root.set_symmetry(symmetry.value());
  return run_check(o, std::move(job), root);
}

}  // namespace railcheck::cli
