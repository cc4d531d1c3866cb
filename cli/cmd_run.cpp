#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "backends/sim/sim_run.hpp"
#include "backends/sim/timeline.hpp"
#include "cli/commands.hpp"
#include "engine/core/engine_assert.hpp"
#include "models/scenario.hpp"

namespace railcheck::cli {

int cmd_run(const RunOptions& o) {
  auto loaded = load_scenario_file(o.scenario);
  if (!loaded) {
    fmt::print(stderr, "railcheck: {}\n", loaded.error().message());
    return kExitBadInput;
  }
  Scenario sc = std::move(loaded).value();
  if (!o.policy.empty()) {
    auto p = parse_replay_policy(o.policy);
    if (!p) {
      fmt::print(stderr, "railcheck: --policy {}: expected naive, probe or resync\n", o.policy);
      return kExitBadInput;
    }
    sc.engine.replay = *p;
  }
  for (const auto& w : advisories(sc.engine)) fmt::print(stderr, "railcheck: warning: {}\n", w);
  const std::uint64_t seed = o.seed.value_or(sc.seed);
  const auto wire = sim::default_wire_mode();
  if (!wire) {
    fmt::print(stderr, "railcheck: {}\n", wire.error().message());
    return kExitBadInput;
  }

  sim::ProgressFn progress;
  if (o.progress) {
    progress = [](Nanos t, std::size_t done, std::size_t total, double wall) {
      fmt::print(stderr, "railcheck: sim {} | {}/{} connections done | wall {:.0f} s\n", format_duration(t), done, total,
                 wall);
    };
  }
  // A broken engine rule is a finding of this run, with its replay command, not an abort.
  set_assertion_mode(AssertionMode::Record);
  const sim::RunOutput out = sim::run_scenario(sc, seed, progress, wire.value());
  if (o.print_events) {
    for (const auto& t : out.traces)
      fmt::print("{:>12}  rank {:<3} conn {:<3} {:<8} path {}  {:<20} {} {}\n", format_duration(t.at), t.rank, t.conn,
                 t.side == sim::Side::Sender ? "sender" : "receiver", t.note.path.value, to_string(t.note.kind),
                 t.note.count, t.note.detail);
  }
  fmt::print("{}", sim::to_text(out.summary));
  if (!o.trace_path.empty()) {
    std::ofstream f(o.trace_path);
    if (!f || !(f << sim::timeline_json(sc, out).dump() << "\n") || !f.flush()) {
      fmt::print(stderr, "railcheck: cannot write {}\n", o.trace_path);
      return kExitBadInput;
    }
  }
  if (!o.json_path.empty()) {
    const std::string text = sim::to_json(out.summary).dump(2) + "\n";
    if (o.json_path == "-") {
      std::cout << text;
    } else {
      std::ofstream f(o.json_path);
      if (!f || !(f << text) || !f.flush()) {
        fmt::print(stderr, "railcheck: cannot write {}\n", o.json_path);
        return kExitBadInput;
      }
    }
  }
  const auto outcome = out.summary.outcome;
  if (assertion_failures() > 0) {
    fmt::print(stderr, "railcheck: engine assertion failed in {}: {} — replay with: railcheck run {} --seed {}\n",
               sc.name, first_assertion_failure().describe(), o.scenario, seed);
    return kExitViolation;
  }
  if (outcome == sim::RunOutcome::Corrupted || outcome == sim::RunOutcome::Hung) {
    fmt::print(stderr, "railcheck: violation in {} — replay with: railcheck run {} --seed {}\n", sc.name, o.scenario,
               seed);
    return kExitViolation;
  }
  return kExitOk;
}

}  // namespace railcheck::cli
