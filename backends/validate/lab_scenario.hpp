#pragma once
// A scenario as both drivers can run it (issue 41, `railcheck validate`). The lab is two network
// namespaces joined by two veth rails carrying libfabric's tcp;ofi_rxm, not a 400 Gb/s RDMA
// NIC, so validation runs the scenario on both drivers with its NIC replaced by the calibrated
// lab link, and its workload cut to what one lab stream carries: one direction (rank 0 -> rank
// 1, one connection), messages of at most kLabMaxMessageBytes, enough of them to run past the
// fault. The engine tunables and the fault (kind, rail, time) are the scenario's. Every change is
// listed in `changes`, for the report.
//
// Faults the lab makes, as a schedule of actions after the stream's first delivery
// (conform::LabFault): links down and back up, flaps (taking one end of a veth pair down drops the
// carrier of both), delay spikes and loss by `tc netem` on a veth end's egress, a stalled receiving
// process (SIGSTOP, SIGCONT). Not yet: incast, slow receivers, stalls of the sender, more than two
// ranks or rails: not_runnable() says so, and `validate` exits 77.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/conform/lab_failover.hpp"
#include "engine/core/result.hpp"
#include "models/scenario.hpp"

namespace railcheck::validation {

// What calibration measured of the lab's link, with the provider in between (calibration.hpp).
struct LabLink {
  double gbps = 0;     // payload rate of one stream of the lab's message size and window
  double shaped_gbps = 0;  // the rails' rate limit (NetnsLab::limit_rate), 0 when unshaped
  std::string provider;    // the libfabric provider calibrated, which the lab's runs then use
  Nanos round_trip{};  // one message and its completion, window 1, 64 B
  std::size_t message_bytes = 0;
  std::uint32_t window = 0;
  // How late the backend reads an idle rail's CQ: one coarse-clock tick (clock_getres of
  // CLOCK_MONOTONIC_COARSE: the kernel's HZ), where 1024 progress() calls take longer
  // (fabric_executor.cpp kIdlePollEvery; 20-30 us per lab loop).
  Nanos idle_rail_poll{};
  // TCP's minimum retransmission timeout in the lab's namespaces (net.ipv4.tcp_rto_min_us, 200 ms
  // unless changed): what a lost packet of the lab's stream waits before it goes again.
  Nanos transport_rto{};
  // How often the kernel retries an unanswered neighbour (ARP) resolution (the namespace's
  // net.ipv4.neigh.default.retrans_time_ms, 1 s unless changed). A link's carrier loss flushes its
  // neighbour entries; a side that sends on the rail while it is down (the liveness probes do,
  // every few ms) leaves an entry whose solicitation was dropped, and its traffic to the peer then
  // waits for the next retry: the rail carries traffic again only at the down instant plus a
  // whole number of these, however short the outage (measured: docs/validation.md).
  Nanos neighbour_retry{};
  // The rate calibration's stream landed at, per conform::kLandedBin from its first delivery after
  // the warm-up (messages per bin; the last bin partial).
  std::vector<std::uint32_t> landed_per_bin;
  // Per bin, the share of it the two sides ran on one core (-1: not known).
  std::vector<double> shared_core_per_bin;
};

// The scenario's link outages as the lab's rails live them: where a side sends during an outage
// (the liveness detector's probes do; with it off, TCP's own retransmission does once the outage
// outlasts `link.transport_rto`), the link's return moves to the next neighbour retry after it
// (LabLink::neighbour_retry), flaps whose returns reach the next down merged into one outage.
// Returns the changed profile and says what moved in `changes`.
FaultProfile lab_link_outages(const FaultProfile& faults, const HaTunables& engine, const LabLink& link,
                              std::vector<std::string>& changes);

// ofi_rxm's eager size (FI_OFI_RXM_BUFFER_SIZE, 16 KiB by default): larger messages go by
// rendezvous, and with those libfabric 1.17.0 (Debian 12) crashes in fi_close of the receiving
// endpoint once its rail's link has died (SIGSEGV under ofi_rxm's endpoint close, recorded
// 2026-11-27 with 64 KiB messages and the resync policy; docs/validation.md). Until that is
// worked around in the backend, the lab runs eager messages.
inline constexpr std::size_t kLabMaxMessageBytes = 16 * 1024;
// The sim's wire for the lab: fast enough never to be the bottleneck (the lab's rate is its hosts'
// work per message, NicPreset::host_gbps; a veth pair copies in memory).
inline constexpr double kLabWireGbps = 1000;
// One TCP segment on the lab's veth (MTU 1500 less the IP and TCP headers and timestamps): the
// unit a partial loss drops (NicPreset::mtu of the lab link).
inline constexpr std::uint32_t kLabSegmentBytes = 1448;
// Messages the lab streams before its clock starts (LabFailoverPlan::warmup): two windows, so that
// a fresh connection's stall after its first window falls inside them.
inline std::uint32_t lab_warmup(std::uint32_t window) { return std::max<std::uint32_t>(16, 2 * window); }
// The stream runs at least this long past the fault, so that detection, the switch and the
// goodput after it are all inside it.
inline constexpr auto kLabRunPastFault = std::chrono::milliseconds(400);

// Why the lab cannot run `sc` (a fault it cannot make, a topology it does not have), or nothing.
std::optional<std::string> not_runnable(const Scenario& sc);
// The same over `provider`: over shm the bytes move through shared memory, so a rail's link going
// down, a loss or a delay never reaches them; only a stalled process runs there.
std::optional<std::string> not_runnable(const Scenario& sc, const std::string& provider);

struct LabScenario {
  Scenario sim;                      // the scenario as the SimGrid driver runs it beside the lab
  conform::LabFailoverPlan lab;      // the same as the lab runs it
  std::vector<std::string> changes;  // what differs from the scenario file, one line each
};

// `link` from calibration: the sim's NIC becomes the lab link (its rate and latency).
Result<LabScenario> lab_version(const Scenario& sc, const LabLink& link);
// The sim's NIC as the lab link `link` (what lab_version does to it).
void apply_lab_link(NicPreset& nic, const LabLink& link);
// The link over a lab run, from the calibrations taken just before and just after it: the mean of
// their rates and round trips (the load of a shared machine drifts within seconds).
LabLink bracket(const LabLink& before, const LabLink& after);

}  // namespace railcheck::validation
