// The loop of `railcheck validate` (validate_scenario.hpp).
#include "backends/validate/validate_scenario.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "backends/hw/conform/lab_failover.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "backends/sim/sim_run.hpp"
#include "backends/validate/calibration.hpp"
#include "backends/validate/lab_scenario.hpp"

namespace railcheck::validation {
namespace {

using Status = Validation::Status;

struct MadeLab {
  std::unique_ptr<conform::NetnsLab> lab;
  Status status = Status::Compared;
  std::string why;
};

// The lab, or why this machine cannot make it. It is built before anything touches libfabric
// (`ip` runs as a child process), and taken down when the returned object goes.
MadeLab make_lab(const Scenario& sc, const ValidateRequest& r) {
  MadeLab out;
  if (auto why = not_runnable(sc, r.provider)) {
    out.status = Status::Skipped;
    out.why = fmt::format("{} cannot run in the lab: {}", sc.name, *why);
    return out;
  }
  if (geteuid() != 0) {
    out.status = Status::Skipped;
    out.why = "the netns lab needs root (network namespaces and veth pairs)";
    return out;
  }
  auto made = conform::NetnsLab::create(conform::default_netns_prefix(), sc.topology.rails);
  if (!made) {
    out.status = Status::Skipped;
    out.why = "network namespaces are not available here: " + made.error().message();
    return out;
  }
  out.lab = std::move(made).value();
  if (r.lab_gbps > 0 && fabric::runs_over_tcp_sockets(r.provider)) {
    if (auto shaped = out.lab->limit_rate(r.lab_gbps); !shaped) {
      out.status = Status::Skipped;
      out.why = shaped.error().message() + " (--lab-gbps 0 runs the lab unshaped)";
      out.lab.reset();
      return out;
    }
  }
  if (auto usable = conform::provider_usable_in_lab(*out.lab, r.provider); !usable) {
    out.status = Status::Skipped;
    out.why = usable.error().message();
    out.lab.reset();
  }
  return out;
}

// The lab's ofi_rxm sized as the NCCL plugin sizes it (fabric::size_rxm_like_the_plugin), with
// why it matters here: at rxm's default 128 a send that re-opens a returned rail's connection
// blocks 50-80 ms zeroing buffers, a cost the sim does not model.
std::string size_rxm_like_the_plugin(const std::string& provider) {
  const bool sized_by_user = std::getenv("FI_OFI_RXM_MSG_RX_SIZE") != nullptr;
  std::string line = fabric::size_rxm_like_the_plugin(provider);
  if (!line.empty() && !sized_by_user)
    line += ": at rxm's default a send that re-opens a returned rail's connection blocks 50-80 ms zeroing buffers, "
            "which the sim does not model";
  return line;
}

std::size_t lab_message_bytes(const Scenario& sc) {
  return static_cast<std::size_t>(std::min<std::uint64_t>(sc.workload.message_bytes, kLabMaxMessageBytes));
}

void say(const ValidateRequest& r, const std::string& line) {
  if (r.progress) r.progress(line);
}

Validation stopped(Status status, std::string why) {
  Validation v;
  v.status = status;
  v.why = std::move(why);
  return v;
}

}  // namespace

Validation validate_scenario(const Scenario& sc, const ValidateRequest& request) {
  const std::string rxm_line = size_rxm_like_the_plugin(request.provider);
  MadeLab made = make_lab(sc, request);
  if (!made.lab) return stopped(made.status, made.why);
  const conform::NetnsLab& lab = *made.lab;
  const std::size_t bytes = lab_message_bytes(sc);
  // The faults' tools, tried once before any run: a machine without them skips, it does not fail.
  // The plan's link figures do not matter to which tools its faults need.
  {
    LabLink placeholder;
    placeholder.gbps = 1;
    placeholder.round_trip = Nanos{1000};
    auto plan = lab_version(sc, placeholder);
    if (!plan) return stopped(Status::BadInput, plan.error().message());
    if (auto can = conform::lab_can_make(lab, plan->lab.fault); !can)
      return stopped(Status::Skipped,
                     fmt::format("this machine cannot make {}'s faults in the lab: {}", sc.name, can.error().message()));
  }
  const auto wire = sim::default_wire_mode();
  if (!wire) return stopped(Status::BadInput, wire.error().message());
  const std::uint64_t seed = request.seed.value_or(sc.seed);
  std::vector<sim::RunSummary> predicted;
  std::vector<conform::LabFailoverResult> runs;
  std::vector<std::string> changes, calibrations;
  bool realtime = true;
  // The calibration just after run i is also the one just before run i + 1 (nothing but the
  // sim's prediction runs between them), so N runs take N + 1 calibrations, not 2N.
  std::optional<LabLink> last_after;
  for (std::uint32_t i = 0; i < request.runs; ++i) {
    Result<LabLink> before = last_after ? Result<LabLink>(*last_after) : [&] {
      say(request, fmt::format("run {} of {}: calibrating the lab link ({} B messages, window {})", i + 1, request.runs,
                               bytes, sc.workload.window));
      return calibrate(lab, request.provider, bytes, sc.workload.window, sc.engine);
    }();
    if (!before) return stopped(Status::Failed, before.error().message());
    auto both = lab_version(sc, before.value());
    if (!both) return stopped(Status::BadInput, both.error().message());
    if (i == 0) {
      changes = both->changes;
      // What carries the lab's bytes between the namespaces, where a veth pair does (not shm's).
      if (fabric::runs_over_tcp_sockets(request.provider)) {
        const std::string rails =
            request.lab_gbps > 0
                ? fmt::format("each rail shaped to {:g} Gb/s each way (tc tbf on both veth ends): the lab stream is "
                              "bound by its link, as a NIC's is, not by this machine's CPU",
                              request.lab_gbps)
                : std::string("rails unshaped (--lab-gbps 0): the lab stream runs at its receiving side's CPU rate");
        changes.insert(changes.begin() + (changes.empty() ? 0 : 1), rails);
      }
      if (!rxm_line.empty()) changes.insert(changes.begin() + (changes.size() < 2 ? changes.size() : 2), rxm_line);
    }
    say(request, fmt::format("run {} of {}: the lab, a calibration after it{}, the sim", i + 1, request.runs,
                             i + 1 < request.runs ? " (the next run's before)" : ""));
    auto r = conform::run_lab_failover(lab, both->lab);
    if (!r) return stopped(Status::Failed, r.error().message());
    auto after = calibrate(lab, request.provider, bytes, sc.workload.window, sc.engine);
    if (!after) return stopped(Status::Failed, after.error().message());
    last_after = after.value();
    // The sim runs the lab run's stream (its length came from the first calibration) on the link
    // as the two calibrations either side of the run measured it.
    apply_lab_link(both->sim.topology.nic, bracket(before.value(), after.value()));
    // How far each calibration's own rate moved over spans as long as this run's before the fault:
    // the lab's repeatability, against which a goodput_before row is read (docs/validation.md).
    std::string spread;
    if (r->start_ns >= 0 && r->fault_ns > r->start_ns) {
      // goodput_before's span (conform::before_fault_gbps).
      const Nanos span{(r->due_ns > r->start_ns && r->due_ns <= r->fault_ns ? r->due_ns : r->fault_ns) - r->start_ns};
      auto text = [](const std::optional<std::pair<double, double>>& w) {
        return w ? fmt::format("{:.2f}-{:.2f}", w->first, w->second) : std::string("-");
      };
      spread = fmt::format(" (over {:.0f} ms: {} | {})", to_millis(span), text(window_rates(before.value(), span)),
                           text(window_rates(after.value(), span)));
    }
    calibrations.push_back(fmt::format("run {}: {:.2f} | {:.2f} Gb/s per stream{}, {:.1f} | {:.1f} us round trip",
                                       i + 1, before->gbps, after->gbps, spread,
                                       static_cast<double>(before->round_trip.count()) / 1e3,
                                       static_cast<double>(after->round_trip.count()) / 1e3));
    predicted.push_back(sim::run_scenario(both->sim, seed + i, {}, wire.value()).summary);
    realtime = realtime && r->realtime;
    runs.push_back(std::move(r).value());
  }
  Tolerance tol;
  tol.messages_floor = std::max<double>(tol.messages_floor, sc.workload.window);
  Validation v;
  v.answer = compare(sc.name, predicted, bytes, runs, tol);
  v.answer.changes = std::move(changes);
  v.answer.changes.push_back(
      "calibrated before | after each run, the sim on their mean (the first run's 'before' above): " +
      fmt::format("{}", fmt::join(calibrations, "; ")));
  v.answer.machine = fmt::format("{} lab run(s), {} sides, provider {}", runs.size(),
                                 realtime ? "SCHED_FIFO" : "normal-priority (timings include waits for a core)",
                                 request.provider);
  return v;
}

LinkKeys calibrate_lab_link(const Scenario& sc, const ValidateRequest& request) {
  LinkKeys out;
  (void)size_rxm_like_the_plugin(request.provider);  // the link calibrated is the one validate runs
  MadeLab made = make_lab(sc, request);
  if (!made.lab) {
    out.status = made.status;
    out.why = made.why;
    return out;
  }
  const std::size_t bytes = lab_message_bytes(sc);
  say(request, fmt::format("calibrating the lab link ({} B messages, window {})", bytes, sc.workload.window));
  auto link = calibrate(*made.lab, request.provider, bytes, sc.workload.window, sc.engine);
  if (!link) {
    out.status = Status::Failed;
    out.why = link.error().message();
    return out;
  }
  out.keys = topology_keys(link.value(), request.provider);
  return out;
}

}  // namespace railcheck::validation
