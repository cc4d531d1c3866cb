// railcheck replay: re-run a counterexample trace through the engine and say what happens.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "verify/counterexample.hpp"
#include "verify/failover_invariants.hpp"
#include "verify/trace_to_scenario.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace railcheck::cli {

int cmd_replay(const ReplayOptions& o) {
  using namespace railcheck::verify;
  if (auto rc = replay_named_world(o)) return *rc;
  if (is_zerobuf_trace_file(o.trace)) return cmd_replay_zerobuf(o);
  auto trace = read_trace_file(o.trace);
  if (!trace) {
    fmt::print(stderr, "railcheck replay: {}\n", trace.error().message());
    return kExitBadInput;
  }
  FailoverTrace t = trace.value();
  if (!o.policy.empty()) {
    const auto p = parse_replay_policy(o.policy);
    if (!p) {
      fmt::print(stderr, "railcheck replay: --policy {}: expected naive, probe or resync\n", o.policy);
      return kExitBadInput;
    }
    t.model.tunables.replay = *p;
  }
  fmt::print("replaying {} ({} steps): {}\n", o.trace, t.steps.size(), describe(t.model));
  if (!t.invariant.empty()) fmt::print("recorded: {} violated: {}\n", t.invariant, t.message);
  auto out = replay_trace(t, failover_invariants());
  if (!out) {
    fmt::print(stderr, "railcheck replay: {}\n", out.error().message());
    return kExitBadInput;
  }
  for (const auto& line : out.value().lines) fmt::print("{}\n", line);
  const int rc = out.value().invariant ? kExitViolation : kExitOk;
  if (out.value().invariant) {
    fmt::print("VIOLATION of {} after step {}: {}\n", *out.value().invariant, out.value().steps_run,
               *out.value().message);
  } else {
    fmt::print("replayed {} steps: no invariant violated\n", out.value().steps_run);
  }
  if (!o.sim && o.sim_scenario.empty()) return rc;
  // The same rail faults, at the same times, on the SimGrid driver.
  const auto sc = trace_to_scenario(t);
  const std::string path = o.sim_scenario.empty() ? o.trace + ".scenario.toml" : o.sim_scenario;
  std::ofstream f(path);
  if (!f || !(f << sc.toml) || !f.flush()) {
    fmt::print(stderr, "railcheck replay: cannot write {}: {}\n", path, std::strerror(errno));
    return kExitBadInput;
  }
  f.close();
  fmt::print("\nwrote {} ({} timed fault(s); {} loss(es) have no timed equivalent)\n", path, sc.faults, sc.left_out);
  if (!o.sim) return rc;
  fmt::print("running it on the SimGrid driver:\n");
  RunOptions run;
  run.scenario = path;
  const int sim_rc = cmd_run(run);
  return rc != kExitOk ? rc : sim_rc;
}

}  // namespace railcheck::cli
