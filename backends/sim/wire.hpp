#pragma once
// Packets on the simulated wire. On the Sendto and Mailbox wires each posted send becomes a
// short-lived actor that carries it over its path (on the Event wire, a state machine with the
// same steps: event_wire.hpp), with RC semantics:
//   - transfers take SimGrid network time on the two NIC links of the path's rail;
//   - a packet lands only in PSN order, only on a responder QP in RTR/RTS, and only into a
//     posted receive (otherwise RNR NAK, retried after min_rnr_timer, forever if rnr_retry=7);
//   - a lost packet or a lost ACK is retried after the local ACK timeout; after retry_cnt
//     retries the oldest outstanding WR completes with RETRY_EXC_ERR and the QP goes to ERR;
//   - a duplicate of a packet that already landed is acknowledged, never delivered twice
//     (the responder's PSN check), exactly as an HCA does.
#include <cstdint>

#include "backends/sim/sim_world.hpp"

namespace railcheck::sim {

constexpr Side other(Side s) { return s == Side::Sender ? Side::Receiver : Side::Sender; }

// What the requester learns of one attempt: an ACK, an RNR NAK, or nothing (lost).
enum class PacketOutcome : std::uint8_t { Acked, Lost, Rnr };

// A packet reached the responder QP and is next in PSN order (or the QP accepts nothing): it is
// dropped (a QP in ERR or RESET), ACKed again (a retransmission of one that landed), refused for
// want of a posted receive (RNR NAK), or delivered into the oldest posted receive, whose
// completion is queued. Returns what the requester will hear.
PacketOutcome land_packet(SimWorld& w, std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn,
                          const PostedWr& wr);

// Per-packet random extra delay from jitter profiles active on either end of the path at `at`
// (now by default; draws from the run's generator when a spread is active). Only data packets
// draw it.
Nanos jitter_delay(SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail);
Nanos jitter_delay(SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail, Nanos at);

// The fixed extra latency (`extra`) of the delay spikes in force now on either NIC link of the
// path a -> b on `rail`: everything that leaves now over that path (a packet, its ACK, a control
// message, a probe, an incast chunk) waits this long before it goes on the wire, as behind a full
// switch queue. It is decided per message when it leaves, never by changing a link's latency:
// SimGrid 3.32 adjusts every transfer on a link whose latency changes, and never completes one
// that is in its latency phase when the latency drops back (swarm seed 2776, docs/swarm.md).
Nanos spike_delay(const SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail);
Nanos spike_delay(const SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail, Nanos at);

// The spike and jitter a data message meets, decided when its bytes leave the host. Where the
// host sends at NicPreset::host_gbps (the lab's TCP stream), `leaves` is the end of the host's
// backlog when this message's turn comes (SimQp::host_free_at then): the lab's provider moves
// bytes only inside its progress calls (FI_PROGRESS_MANUAL), and a sender that posts a window of
// messages one after another pushes their bytes together after the last post, so a spike that
// begins while a window is being posted holds the whole window (validate's v-delay-big, traced
// in the lab: eight messages posted 0.7-0.2 ms before the spike all completed after it, none a
// round trip early; docs/validation.md). `leaves` in SimGrid's seconds; without host_gbps it is now, as before.
Nanos data_delay(SimWorld& w, std::uint32_t src, std::uint32_t dst, std::uint32_t rail, double leaves);

// A daemon actor on `host` that is the permanent receiver of `mbox`: a put to `mbox` then starts
// at once, from the putting actor's host to `host`, like a host-to-host Comm::sendto, but is not
// a detached comm (WireMode explains why that matters).
void start_permanent_receiver(simgrid::s4u::Host* host, simgrid::s4u::Mailbox* mbox);
// WireMode::Mailbox: one receiving actor per NIC host, the permanent receiver of its mailbox.
// Call once per run, before any packet is launched.
void start_nic_receivers(SimWorld& w);
// A send WR just posted on `path` of connection `conn` by `from` with PSN `psn`.
void launch_data_packet(SimWorld& w, std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn,
                        std::uint32_t generation, const PostedWr& wr);
// A rail-liveness probe (engine ProbeRail) from `from`'s NIC to its peer's on `path`'s rail: a
// one-sided op the peer's NIC answers whatever its process is doing. The answer comes back as
// ProbeAnswered; a probe or answer lost on the way (link down, one-way loss) brings nothing.
void launch_probe(SimWorld& w, std::uint32_t conn, Side from, std::uint32_t path, std::uint64_t nonce);
// A packet leaving rank `src`'s NIC on `rail` now is lost to a one-way loss fault (draws from
// the run's generator when the probability is strictly between 0 and 1).
bool lost_one_way(SimWorld& w, std::uint32_t src, std::uint32_t rail);

// What a loss fault does to one message of `bytes` sent by `src` on `rail` now. On an RC QP each
// packet is dropped with the fault's probability and waits for the local ACK timeout: Lost. On a
// transport with its own retransmission (NicPreset::transport_rto: TCP) a message is
// ceil(bytes / mtu) segments and is hit where any of them is; while the direction is not cut
// (probability < 1) the segments behind the lost one arrive, their duplicate ACKs ask for it and
// it comes a round trip late (Repaired: fast retransmit); a cut direction leaves only the RTO
// (Lost, then after_loss).
enum class LossFate : std::uint8_t { Through, Repaired, Lost };
LossFate message_fate(SimWorld& w, std::uint32_t src, std::uint32_t rail, std::uint64_t bytes);
// Whether the acknowledgement `src` sends back on `rail` now is lost: as a packet on an RC QP; on
// TCP only where the direction is cut (a later cumulative ACK covers a dropped one).
bool ack_lost(SimWorld& w, std::uint32_t src, std::uint32_t rail);
// The round trip between two NICs of a rail, for TCP's fast retransmit.
double round_trip(SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail);

// After the attempt that began at `attempt` (simulated seconds) was lost, for the `retries`-th
// time: when the next one goes out, or when the requester gives up (RETRY_EXC_ERR) instead. The
// RC QP's local ACK timeout and retry count, or the transport's own (NicPreset::transport_rto).
struct RetryPlan {
  double at = 0;
  bool give_up = false;
};
RetryPlan after_loss(const SimWorld& w, double attempt, std::uint32_t retries);

// When the requester's host has prepared a send of `bytes` posted (or retried) at `now`, in
// simulated seconds: its sends one after another at NicPreset::host_gbps; `now` where that is 0.
double host_ready_at(const SimWorld& w, SimQp& requester, std::uint64_t bytes, double now);
// Background flows of the scenario's incast faults (each its own actor). Call once per run.
void start_incast_flows(SimWorld& w);
// A control message from `from` to its peer.
void launch_control(SimWorld& w, std::uint32_t conn, Side from, const ControlChannel& ch, const ControlMessage& m);
// Bootstrap (out-of-band TCP) latency.
constexpr Nanos kOobLatency = us(20);
// Bytes a control message occupies on the wire.
constexpr std::uint64_t kControlBytes = 64;
// Bytes of a probe and of its answer: an 8-byte READ's request and response, with headers.
constexpr std::uint64_t kProbeBytes = 64;

}  // namespace railcheck::sim
