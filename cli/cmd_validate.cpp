// railcheck validate: one scenario on the SimGrid driver and in the netns lab, side by side
// (backends/validate, issue 41). Exit 0 the drivers agree, 1 they disagree beyond the tolerance,
// 2 bad input, 77 the scenario or this machine cannot run it in the lab (which one says why).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "backends/hw/conform/lab_failover.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "backends/hw/verbs/verbs_probe.hpp"
#include "backends/sim/sim_run.hpp"
#include "backends/validate/calibration.hpp"
#include "backends/validate/lab_scenario.hpp"
#include "backends/validate/side_by_side.hpp"
#include "cli/cli_output.hpp"
#include "cli/commands.hpp"
#include "models/scenario.hpp"

namespace railcheck::cli {
namespace {

constexpr int kExitSkipped = hw::verbs::kExitSkipped;  // 77, as conform

int skipped(const std::string& why) {
  fmt::print(stderr, "railcheck validate: {}; skipped\n", why);
  return kExitSkipped;
}

}  // namespace

int cmd_validate(const ValidateOptions& o) {
  auto loaded = load_scenario_file(o.scenario);
  if (!loaded) {
    fmt::print(stderr, "railcheck validate: {}\n", loaded.error().message());
    return kExitBadInput;
  }
  const Scenario sc = std::move(loaded).value();
  if (auto why = validation::not_runnable(sc))
    return skipped(fmt::format("{} cannot run in the lab: {}", sc.name, *why));
  if (geteuid() != 0) return skipped("the netns lab needs root (network namespaces and veth pairs)");
  // The lab is built before anything touches libfabric (`ip` runs as a child process), and taken
  // down when this function returns.
  auto made = conform::NetnsLab::create(conform::default_netns_prefix());
  if (!made) return skipped("network namespaces are not available here: " + made.error().message());
  const auto lab = std::move(made).value();
  if (auto usable = conform::provider_usable_in_lab(*lab, o.provider); !usable)
    return skipped(usable.error().message());

  const std::size_t bytes = std::min<std::uint64_t>(sc.workload.message_bytes, validation::kLabMaxMessageBytes);
  if (!o.calibrate) {
    // The faults' tools, tried once before any run: a machine without them skips, it does not fail.
    validation::LabLink probe;
    probe.gbps = 1;
    probe.round_trip = Nanos{1000};
    if (auto plan = validation::lab_version(sc, probe); plan.ok())
      if (auto can = conform::lab_can_make(*lab, plan->lab.fault); !can)
        return skipped(fmt::format("this machine cannot make {}'s faults in the lab: {}", sc.name, can.error().message()));
  }
  if (o.calibrate) {
    fmt::print(stderr, "railcheck validate: calibrating the lab link ({} B messages, window {})\n", bytes,
               sc.workload.window);
    auto link = validation::calibrate(*lab, o.provider, bytes, sc.workload.window, sc.engine);
    if (!link) {
      fmt::print(stderr, "railcheck validate: {}\n", link.error().message());
      return kExitViolation;
    }
    const std::string keys = validation::topology_keys(link.value(), o.provider);
    fmt::print("{}", keys);
    if (!o.out_path.empty() && !write_text(o.out_path, keys))
      return bad_input("validate", fmt::format("cannot write {}", o.out_path));
    return kExitOk;
  }
  const auto wire = sim::default_wire_mode();
  if (!wire) {
    fmt::print(stderr, "railcheck validate: {}\n", wire.error().message());
    return kExitBadInput;
  }
  const std::uint64_t seed = o.seed.value_or(sc.seed);
  // Each lab run gets its own calibration, taken just before it, and its own prediction from
  // that: the lab's rate follows the machine's load, which drifts over an invocation.
  std::vector<sim::RunSummary> predicted;
  std::vector<conform::LabFailoverResult> runs;
  std::vector<std::string> changes, calibrations;
  bool realtime = true;
  for (std::uint32_t i = 0; i < o.runs; ++i) {
    fmt::print(stderr, "railcheck validate: run {} of {}: calibrating the lab link ({} B messages, window {})\n", i + 1,
               o.runs, bytes, sc.workload.window);
    auto link = validation::calibrate(*lab, o.provider, bytes, sc.workload.window, sc.engine);
    if (!link) {
      fmt::print(stderr, "railcheck validate: {}\n", link.error().message());
      return kExitViolation;
    }
    auto both = validation::lab_version(sc, link.value());
    if (!both) {
      fmt::print(stderr, "railcheck validate: {}\n", both.error().message());
      return kExitBadInput;
    }
    if (i == 0) changes = both->changes;
    fmt::print(stderr, "railcheck validate: run {} of {}: the lab, a calibration after it, the sim\n", i + 1, o.runs);
    auto r = conform::run_lab_failover(*lab, both->lab);
    if (!r) {
      fmt::print(stderr, "railcheck validate: {}\n", r.error().message());
      return kExitViolation;
    }
    auto after = validation::calibrate(*lab, o.provider, bytes, sc.workload.window, sc.engine);
    if (!after) {
      fmt::print(stderr, "railcheck validate: {}\n", after.error().message());
      return kExitViolation;
    }
    // The sim runs the lab run's stream (its length came from the first calibration) on the link
    // as the two calibrations either side of the run measured it.
    const validation::LabLink over = validation::bracket(link.value(), after.value());
    validation::apply_lab_link(both->sim.topology.nic, over);
    calibrations.push_back(fmt::format("run {}: {:.2f} | {:.2f} Gb/s per stream, {:.1f} | {:.1f} us round trip", i + 1,
                                       link->gbps, after->gbps, static_cast<double>(link->round_trip.count()) / 1e3,
                                       static_cast<double>(after->round_trip.count()) / 1e3));
    predicted.push_back(sim::run_scenario(both->sim, seed + i, {}, wire.value()).summary);
    realtime = realtime && r->realtime;
    runs.push_back(std::move(r).value());
  }
  validation::Tolerance tol;
  tol.messages_floor = std::max<double>(tol.messages_floor, sc.workload.window);
  validation::SideBySide s = validation::compare(sc.name, predicted, bytes, runs, tol);
  s.changes = std::move(changes);
  s.changes.push_back("calibrated before | after each run, the sim on their mean (the first run's 'before' above): " +
                      fmt::format("{}", fmt::join(calibrations, "; ")));
  s.machine = fmt::format("{} lab run(s), {} sides, provider {}", runs.size(),
                          realtime ? "SCHED_FIFO" : "normal-priority (timings include waits for a core)", o.provider);
  fmt::print("{}", validation::to_text(s));
  if (!o.json_path.empty() && !write_text(o.json_path, validation::to_json(s).dump(2) + "\n"))
    return bad_input("validate", fmt::format("cannot write {}", o.json_path));
  return s.agree() ? kExitOk : kExitViolation;
}

}  // namespace railcheck::cli
