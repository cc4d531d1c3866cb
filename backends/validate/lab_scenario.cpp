// A scenario as both drivers can run it (lab_scenario.hpp).
#include "backends/validate/lab_scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace railcheck::validation {
namespace {

std::string bytes_text(std::uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

}  // namespace

std::optional<std::string> not_runnable(const Scenario& sc) {
  const auto& f = sc.faults;
  if (sc.topology.ranks != 2) return fmt::format("the lab has two hosts; the scenario has {} ranks", sc.topology.ranks);
  if (sc.topology.rails < 2 || sc.topology.paths_per_conn != 2)
    return fmt::format(
        "the lab has two rails, each connection a primary and one standby; the scenario has {} rails, "
        "{} paths per connection",
        sc.topology.rails, sc.topology.paths_per_conn);
  auto needs = [](std::string_view what, std::string_view tool) {
    return fmt::format("{} need {} in the lab, which validate does not drive yet (issue 41)", what, tool);
  };
  if (!f.flaps.empty()) return needs("link flaps (faults.link_flap)", "a timed ip link down/up");
  if (!f.jitters.empty()) return needs("delay spikes (faults.jitter)", "tc netem delay");
  if (!f.losses.empty()) return needs("losses (faults.one_way_loss)", "tc netem loss");
  if (!f.incasts.empty()) return needs("incast congestion (faults.incast)", "competing flows and tc rate limits");
  if (!sc.workload.slow_ranks.empty() && sc.workload.receiver_hold > Nanos{0})
    return needs("slow receivers (workload.receiver_hold_ms)", "receives held back in the lab's stream");
  if (f.downs.size() > 1) return "the lab takes one link down per run; the scenario has several";
  if (!f.downs.empty()) {
    const auto& d = f.downs.front();
    if (d.link.rail != 0)
      return fmt::format("the lab cuts rail 0 (the primary); the scenario cuts rail {}", d.link.rail);
    if (d.until) return needs("a link that comes back (link_down.until)", "a timed ip link up");
  }
  if (f.stalls.size() > 1) return "the lab stops one process per run; the scenario stalls several";
  if (!f.stalls.empty() && !f.downs.empty()) return "the lab makes one fault per run; the scenario has two";
  if (!f.stalls.empty() && f.stalls.front().rank != 1)
    return "the lab stops the receiving process (rank 1); the scenario stalls rank 0";
  return std::nullopt;
}

Result<LabScenario> lab_version(const Scenario& sc, const LabLink& link) {
  if (auto why = not_runnable(sc)) return Error{fmt::format("{}: {}", sc.name, *why), ""};
  if (link.gbps <= 0 || link.round_trip <= Nanos{0})
    return Error{"the lab link is not calibrated (no rate or round trip measured)", ""};
  LabScenario out;
  out.sim = sc;
  // The NIC: the lab link as calibration measured it. Two hops per direction (NIC -> switch ->
  // NIC in the sim's platform), so a round trip is four link latencies.
  NicPreset& nic = out.sim.topology.nic;
  out.changes.push_back(fmt::format(
      "NIC {} ({} Gb/s) replaced by the lab link: tcp;ofi_rxm over veth, {:.2f} Gb/s per stream and a {:.1f} us round "
      "trip as calibrated",
      nic.name, nic.link_gbps, link.gbps, static_cast<double>(link.round_trip.count()) / 1e3));
  nic.name = "lab-veth-tcp";
  nic.description = "the netns lab's veth rail under tcp;ofi_rxm (calibrated)";
  nic.link_gbps = link.gbps;
  nic.link_latency = Nanos{std::max<std::int64_t>(1, link.round_trip.count() / 4)};
  nic.idle_rail_poll = link.idle_rail_poll;
  if (link.idle_rail_poll > Nanos{0})
    out.changes.push_back(fmt::format(
        "the driver reads an idle rail (the standby) once per {:.1f} ms coarse-clock tick, as the libfabric backend "
        "does",
        to_millis(link.idle_rail_poll)));
  // The workload: one stream, rank 0 -> rank 1.
  Workload& w = out.sim.workload;
  if (w.pattern != TrafficPattern::Unidirectional)
    out.changes.push_back("traffic in both directions cut to one stream, rank 0 -> rank 1 (the lab runs one)");
  w.pattern = TrafficPattern::Unidirectional;
  if (w.channels != 1) out.changes.push_back(fmt::format("{} channels per peer cut to 1", w.channels));
  w.channels = 1;
  if (w.recv_group != 1) out.changes.push_back("grouped receives cut to plain ones");
  w.recv_group = 1;
  const std::uint64_t bytes = std::min<std::uint64_t>(w.message_bytes, kLabMaxMessageBytes);
  if (bytes != w.message_bytes)
    out.changes.push_back(fmt::format("messages of {} cut to {}", bytes_text(w.message_bytes), bytes_text(bytes)));
  w.message_bytes = bytes;
  // Enough messages to run past the fault at the calibrated rate, never fewer than the file's.
  const auto fault =
      first_fault_time(sc.faults).value_or(sc.faults.stalls.empty() ? ms(20) : sc.faults.stalls.front().at);
  const double seconds = to_millis(fault) / 1e3 + std::chrono::duration<double>(kLabRunPastFault).count();
  const auto needed = static_cast<std::uint32_t>(
      std::ceil(seconds * link.gbps * 1e9 / 8.0 / static_cast<double>(std::max<std::uint64_t>(bytes, 1))));
  if (needed != w.messages)
    out.changes.push_back(
        fmt::format("{} messages -> {} (the stream must outlast the fault by {} ms at the lab's rate)", w.messages,
                    needed, kLabRunPastFault.count()));
  w.messages = std::max<std::uint32_t>(needed, 64);
  out.sim.time_limit = std::max(out.sim.time_limit, sec(60));

  conform::LabFailoverPlan& p = out.lab;
  p.spec.seed = sc.seed;
  p.spec.messages = w.messages;
  p.spec.fixed_size = static_cast<std::size_t>(bytes);
  p.spec.window = w.window;
  p.spec.max_group = 1;
  p.tunables = sc.engine;
  if (!sc.faults.downs.empty()) {
    p.fault.kind = conform::LabFault::Kind::LinkDown;
    p.fault.at = sc.faults.downs.front().at - w.start;
  } else if (!sc.faults.stalls.empty()) {
    p.fault.kind = conform::LabFault::Kind::StopReceiver;
    p.fault.at = sc.faults.stalls.front().at - w.start;
    p.fault.stop_for = sc.faults.stalls.front().for_;
  }
  return out;
}

}  // namespace railcheck::validation
