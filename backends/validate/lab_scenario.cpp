// A scenario as both drivers can run it (lab_scenario.hpp).
#include "backends/validate/lab_scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "backends/hw/libfabric/provider_query.hpp"

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
  // The lab makes a veth pair per rail; each lab connection uses every rail as a path.
  if (sc.topology.rails < 2 || sc.topology.rails > 3 || sc.topology.paths_per_conn != sc.topology.rails)
    return fmt::format(
        "the lab has two or three rails, each connection with a path on every rail; the scenario has {} rails, "
        "{} paths per connection",
        sc.topology.rails, sc.topology.paths_per_conn);
  auto needs = [](std::string_view what, std::string_view tool) {
    return fmt::format("{} need {} in the lab, which validate does not drive yet (issue 41)", what, tool);
  };
  if (!f.incasts.empty()) return needs("incast congestion (faults.incast)", "competing flows and tc rate limits");
  if (!sc.workload.slow_ranks.empty() && sc.workload.receiver_hold > Nanos{0})
    return needs("slow receivers (workload.receiver_hold_ms)", "receives held back in the lab's stream");
  for (const auto& s : f.stalls)
    if (s.rank != 1) return "the lab stops the receiving process (rank 1); the scenario stalls rank 0";
  // One impairment per side and rail: a second on the same end would replace the first, not add up.
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> impaired;
  for (const auto& l : f.losses) ++impaired[{l.link.rank, l.link.rail}];
  for (const auto& j : f.jitters) {
    ++impaired[{0, j.link.rail}];
    ++impaired[{1, j.link.rail}];
  }
  for (const auto& [end, n] : impaired)
    if (n > 1)
      return fmt::format("the lab holds one loss or delay fault per rank and rail; rank {} rail {} has {}", end.first,
                         end.second, n);
  return std::nullopt;
}

namespace {

using Act = conform::LabAction::Kind;

std::chrono::nanoseconds after_start(Nanos t, const Workload& w) {
  return std::chrono::nanoseconds(std::max<std::int64_t>(0, (t - w.start).count()));
}

// The scenario's faults as the lab's actions, and a line for each saying how the lab makes it.
conform::LabFault lab_faults(const Scenario& sc, std::vector<std::string>& changes) {
  const FaultProfile& f = sc.faults;
  const Workload& w = sc.workload;
  conform::LabFault out;
  auto add = [&](Act k, Nanos at, int side, std::uint32_t rail) -> conform::LabAction& {
    conform::LabAction a;
    a.kind = k;
    a.at = after_start(at, w);
    a.side = side;
    a.rail = static_cast<int>(rail);
    return out.actions.emplace_back(a);
  };
  for (const auto& d : f.downs) {
    add(Act::LinkDown, d.at, 1, d.link.rail);
    if (d.until) add(Act::LinkUp, *d.until, 1, d.link.rail);
  }
  for (const auto& fl : f.flaps)
    for (std::uint32_t i = 0; i < fl.count; ++i) {
      const Nanos down = fl.start + fl.period * i;
      add(Act::LinkDown, down, 1, fl.link.rail);
      add(Act::LinkUp, down + fl.down_for, 1, fl.link.rail);
    }
  if (!f.downs.empty() || !f.flaps.empty())
    changes.push_back("links go down and up by side b's veth end (SIOCSIFFLAGS: both ends lose the carrier)");
  for (const auto& j : f.jitters) {
    // The sim delays both directions through the rank's link (backends/sim/wire.cpp spike_delay,
    // jitter_delay); the delayer holds a side's egress, so both ends of the rail get it.
    for (int side = 0; side < 2; ++side) {
      auto& a = add(Act::Delay, j.at, side, j.link.rail);
      a.delay = j.extra;
      a.spread = j.spread;
      add(Act::Clear, j.until, side, j.link.rail);
    }
    changes.push_back(fmt::format(
        "the delay spike on rank {} rail {} (+{:.3g} ms and up to {:.3g} ms more) holds both ends' packets on rail {} in "
        "the lab's packet delayer (NFQUEUE), in order",
        j.link.rank, j.link.rail, to_millis(j.extra), to_millis(j.spread), j.link.rail));
  }
  for (const auto& l : f.losses) {
    add(Act::Loss, l.at, static_cast<int>(l.link.rank), l.link.rail).loss = l.probability;
    add(Act::Clear, l.until, static_cast<int>(l.link.rank), l.link.rail);
    changes.push_back(fmt::format(
        "the loss on rank {} rail {} ({:.4g}%) is an nftables drop rule on that end's egress{}", l.link.rank,
        l.link.rail, l.probability * 100, l.probability < 1 ? " (the kernel draws which packets: not from the seed)" : ""));
  }
  for (const auto& st : f.stalls) {
    add(Act::StopReceiver, st.at, 1, 0);
    add(Act::ContReceiver, st.at + st.for_, 1, 0);
  }
  if (!f.stalls.empty()) changes.push_back("the stall is SIGSTOP of the receiving process, SIGCONT after it");
  return out;
}

}  // namespace

FaultProfile lab_link_outages(const FaultProfile& faults, const HaTunables& engine, const LabLink& link,
                              std::vector<std::string>& changes) {
  FaultProfile out = faults;
  if (link.neighbour_retry <= Nanos{0}) return out;
  // Every outage that ends, per link, in time order: a flap is its `count` downs.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::pair<Nanos, Nanos>>> outages;
  std::vector<LinkDown> kept;  // downs for good stay as they are
  for (const auto& d : faults.downs) {
    if (d.until)
      outages[{d.link.rank, d.link.rail}].emplace_back(d.at, *d.until);
    else
      kept.push_back(d);
  }
  for (const auto& f : faults.flaps)
    for (std::uint32_t i = 0; i < f.count; ++i) {
      const Nanos down = f.start + f.period * static_cast<std::int64_t>(i);
      outages[{f.link.rank, f.link.rail}].emplace_back(down, down + f.down_for);
    }
  out.downs = kept;
  out.flaps.clear();
  std::uint32_t moved = 0;
  Nanos moved_by{0};
  for (auto& [end, list] : outages) {
    std::sort(list.begin(), list.end());
    std::vector<std::pair<Nanos, Nanos>> merged;
    for (auto [down, up] : list) {
      // Something is sent on the dead rail: a probe (liveness on) or TCP's retransmission (the
      // outage outlasts its timeout). Then the return waits for the next neighbour retry.
      const bool sends_while_down = engine.liveness || (link.transport_rto > Nanos{0} && up - down > link.transport_rto);
      if (sends_while_down) {
        const auto retries = (up - down + link.neighbour_retry - Nanos{1}) / link.neighbour_retry;
        const Nanos back = down + link.neighbour_retry * std::max<std::int64_t>(1, retries);
        if (back > up) {
          ++moved;
          moved_by = std::max(moved_by, back - up);
        }
        up = back;
      }
      if (!merged.empty() && down <= merged.back().second)
        merged.back().second = std::max(merged.back().second, up);
      else
        merged.emplace_back(down, up);
    }
    for (const auto& [down, up] : merged) {
      LinkDown d;
      d.link = LinkRef{end.first, end.second};
      d.at = down;
      d.until = up;
      out.downs.push_back(d);
    }
  }
  if (moved > 0)
    changes.push_back(fmt::format(
        "{} link return(s) moved up to {:.0f} ms later: a side sends on the dead rail ({}), so the peer's neighbour "
        "entry waits for the kernel's next resolution retry (every {:.0f} ms) after the link is back",
        moved, to_millis(moved_by), engine.liveness ? "the liveness probes" : "TCP's retransmission",
        to_millis(link.neighbour_retry)));
  return out;
}

void apply_lab_link(NicPreset& nic, const LabLink& link) {
  nic.name = "lab-veth-tcp";
  nic.description = "the netns lab's veth rail under tcp;ofi_rxm (calibrated)";
  // The lab stream's rate is its sides' work per message (a proxy thread feeding one TCP socket;
  // veth moves bytes by a copy), not a wire's serialisation: the sim's host prepares each QP's
  // sends one after another at the calibrated rate, and its wire adds only the latency. Sharing a
  // slow wire instead made concurrent messages of one stream finish together and the window idle
  // a round trip each time: 20-30 % under the lab's rate (docs/validation.md).
  nic.host_gbps = link.gbps;
  nic.link_gbps = kLabWireGbps;
  nic.link_latency = Nanos{std::max<std::int64_t>(1, link.round_trip.count() / 4)};
  nic.idle_rail_poll = link.idle_rail_poll;
  nic.transport_rto = link.transport_rto;
  nic.mtu = kLabSegmentBytes;  // a loss hits a message where it hits any of its TCP segments
}

LabLink bracket(const LabLink& before, const LabLink& after) {
  LabLink mid = before;
  mid.gbps = (before.gbps + after.gbps) / 2;
  mid.round_trip = (before.round_trip + after.round_trip) / 2;
  return mid;
}

std::optional<std::string> not_runnable(const Scenario& sc, const std::string& provider) {
  if (auto why = not_runnable(sc)) return why;
  const FaultProfile& f = sc.faults;
  if (fabric::is_shm(provider) && (!f.downs.empty() || !f.flaps.empty() || !f.jitters.empty() || !f.losses.empty()))
    return std::string(
        "over shm the bytes move through shared memory: a rail's link going down, a loss or a delay never reaches "
        "them (a stalled process is the fault shm can show; --provider tcp;ofi_rxm runs this one)");
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
  // The lab runs over the provider that was calibrated (validate's --provider).
  if (!link.provider.empty()) out.lab.provider = link.provider;
  const std::string carrier = fabric::is_shm(out.lab.provider) ? "shm between the namespaces (shared memory, no veth)"
                                                                : out.lab.provider + " over veth";
  out.changes.push_back(fmt::format(
      "NIC {} ({} Gb/s) replaced by the lab link: {}, {:.2f} Gb/s per stream and a {:.1f} us round trip as calibrated",
      nic.name, nic.link_gbps, carrier, link.gbps, static_cast<double>(link.round_trip.count()) / 1e3));
  apply_lab_link(nic, link);
  if (link.transport_rto > Nanos{0} && !fabric::is_shm(out.lab.provider))
    out.changes.push_back(fmt::format(
        "lost packets are TCP's: sent again {:.0f} ms later (tcp_rto_min), then twice that, never an error; the "
        "engine's qp_timeout and qp_retry_cnt reach no QP in the lab",
        to_millis(link.transport_rto)));
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
  const auto fault = first_fault_time(sc.faults).value_or(first_benign_fault_time(sc.faults).value_or(ms(20)));
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
  p.warmup = lab_warmup(w.window);
  p.spec.messages = w.messages + p.warmup;
  p.spec.fixed_size = static_cast<std::size_t>(bytes);
  p.spec.window = w.window;
  p.spec.max_group = 1;
  p.tunables = sc.engine;
  p.fault = lab_faults(sc, out.changes);
  // The lab makes the file's outages; the sim models how its rails live them.
  out.sim.faults = lab_link_outages(sc.faults, sc.engine, link, out.changes);
  out.changes.push_back(fmt::format(
      "the lab's clock starts after {} warm-up messages (its provider's set-up; the sim's stream starts connected)",
      p.warmup));
  return out;
}

}  // namespace railcheck::validation
