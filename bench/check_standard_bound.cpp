// Model-checker throughput: exhausts the standard bound (verify/models/standard-*.toml) for the
// safe replay policies and the bidirectional model, and prints states/s and wall time with the
// machine and the date (docs/benchmarks.md records the figures).
//   build/bench/check_standard_bound
#include <fmt/format.h>

#include <string>

#include "bench/machine_line.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_invariants.hpp"

using namespace railcheck;
using namespace railcheck::verify;

namespace {

void run(const std::string& label, const FailoverModel& m) {
  const auto r = explore<FailoverWorld>(FailoverWorld(m), failover_invariants(), SearchLimits{});
  const auto& s = r.stats;
  fmt::print("| {} | {} | {} | {} | {} | {:.2f} | {:.0f} | {} |\n", label, describe(m), s.states, s.distinct,
             s.max_depth, s.seconds, s.states_per_second(),
             r.violation ? "violation: " + r.violation->invariant : (s.exhausted ? "exhausted, clean" : "truncated"));
}

}  // namespace

int main() {
  fmt::print("check_standard_bound: {}; one thread\n\n", bench::machine_summary());
  fmt::print("| model | bound | states | distinct | depth | seconds | states/s | result |\n");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  for (const auto p : {ReplayPolicy::Resync, ReplayPolicy::Probe}) {
    FailoverModel m = standard_bound(p);
    m.bidirectional = false;
    run(fmt::format("standard-{}", to_string(p)), m);
  }
  FailoverModel bi = standard_bound(ReplayPolicy::Resync);
  bi.paths = 2;
  bi.messages = 2;
  bi.link_failures = 1;
  bi.losses = 1;
  bi.timer_races = 1;
  run("bidirectional", bi);
  return 0;
}
