#pragma once
// WireMode::Event: packets without actors. Each data packet's life (wire.hpp lists the RC rules:
// jitter, transfer, PSN order at the responder, RNR and ACK-timeout retries, completion in PSN
// order) is a small state machine, and each control message a put; both are driven by the actor
// of the rank that sent them, which waits on its puts and its packet timers at once with
// `Comm::wait_any_for` and runs the rank's engines in the same loop (RankDriver::run_event_loop).
//
// Three SimGrid 3.32 facts shape it:
//   - A put is routed from the putting actor's host. The rank actor moves to the source NIC
//     host (`this_actor::set_host`) to start a put there, and goes back to its home host (its
//     rail-0 NIC) before it waits.
//   - An actor cannot wait on a condition variable and comms at once, so a rank that waits is
//     woken by a doorbell: a comm it always has pending (a get on its own bell mailbox), which any
//     other rank completes at once with a 0-byte put from the waiter's home host over that host's
//     zero-latency loopback. Only a parked rank is rung, at most once per park; a rank that is
//     running looks at its inbox and its wire before it parks, with no simcall in between.
//   - The NIC mailboxes keep their permanent receivers (wire.hpp), which drain delivered comms.
#include <cstdint>
#include <deque>
#include <queue>
#include <simgrid/s4u.hpp>
#include <vector>

#include "backends/sim/sim_world.hpp"
#include "backends/sim/wire.hpp"

namespace railcheck::sim {

// Where a data packet is in its life. Every stage waits for exactly one thing.
enum class PacketStage : std::uint8_t {
  HostQueue,   // a timer: the host is still sending what was posted before (NicPreset::host_gbps)
  Jitter,      // a timer: a delay spike's extra and the jitter before the transfer
  Transfer,    // a put in flight
  AwaitPsn,    // landed; in the responder QP's waiters until it expects this PSN
  AckFlight,   // a timer: the ACK (or RNR NAK, or nothing) on its way back
  AwaitOrder,  // acknowledged; in the requester QP's waiters until older PSNs completed
  Backoff,     // a timer: the RNR delay, or the local ACK timeout after a loss
  Repair,      // a timer: a segment lost on a TCP link, sent again by fast retransmit a round trip later
};

class EventWire {
 public:
  explicit EventWire(SimWorld& w);

  // The calling actor becomes rank `rank`'s driver: its home host and its doorbell.
  void attach(std::uint32_t rank);
  // Cancels the rank's puts in flight and its doorbell; the rank's actor is ending.
  void detach(std::uint32_t rank);

  // Called by the sender's rank actor (RankDriver::execute), like wire.hpp's launch_*.
  void launch_data(std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn, std::uint32_t generation,
                   const WorkRequest& wr);
  void launch_control(std::uint32_t conn, Side from, std::uint32_t path, const ControlMessage& m);
  // wire.hpp's launch_probe: two puts, out and back, both driven by the prober's actor.
  void launch_probe(std::uint32_t conn, Side from, std::uint32_t path, std::uint64_t nonce);

  // A QP's state, PSNs or receive queue changed: its waiting packets are looked at again by
  // their owners.
  void qp_changed(SimQp& q);
  // Wakes rank `rank` if it is parked (its inbox or its wire has something new for it).
  void ring(std::uint32_t rank);
  // Something was posted to rank `rank`'s inbox: ring it, and if it was parked, note that it was
  // woken for its engines (take_poke) and not only for its packets.
  void poke(std::uint32_t rank);
  bool take_poke(std::uint32_t rank);

  // Runs every packet event of `rank` due now: finished puts, expired timers, waiters to look at.
  void run_due(std::uint32_t rank);
  bool has_due(std::uint32_t rank) const;
  // Moves the rank's actor back to its home host; call before the last look before park().
  void go_home(std::uint32_t rank);
  // Waits until one of the rank's puts finishes, its doorbell rings, or SimGrid's clock reaches
  // `until` or the rank's next packet timer, whichever is first.
  void park(std::uint32_t rank, double until);

 private:
  struct Packet {
    std::uint32_t conn = 0;
    Side from = Side::Sender;
    std::uint32_t path = 0;
    std::uint32_t psn = 0;
    std::uint32_t generation = 0;
    WorkRequest wr;
    std::uint32_t retries = 0;
    std::uint32_t rnr = 0;
    double attempt = 0;  // SimGrid clock at the start of the current attempt
    PacketStage stage = PacketStage::Jitter;
    PacketOutcome outcome = PacketOutcome::Lost;  // in AckFlight: what the ACK will say
    bool give_up = false;                         // in Backoff: the retries are exhausted
  };
  struct ControlPacket {
    std::uint32_t conn = 0;
    Side from = Side::Sender;
    std::uint32_t path = 0;
    ControlMessage message;
  };
  struct ProbePacket {
    std::uint32_t conn = 0;
    Side from = Side::Sender;
    std::uint32_t path = 0;
    std::uint64_t nonce = 0;
  };
  // ProbeOut: on its way to the peer's NIC; ProbeBack: its answer on the way home.
  enum class Cargo : std::uint8_t { Bell, Data, Control, ProbeOut, ProbeBack };
  struct Flight {
    Cargo cargo = Cargo::Bell;
    std::uint32_t id = 0;  // index into packets_ or controls_
  };
  struct Landed {
    Flight flight;
    bool ok = true;
  };
  // A data packet's next step, or a control message or probe held back by a delay spike
  // (spike_delay) before its put.
  struct Timer {
    double at = 0;
    std::uint64_t order = 0;  // FIFO among timers due at the same instant
    Flight flight;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  struct RankWire {
    simgrid::s4u::Host* home = nullptr;
    simgrid::s4u::Mailbox* bell_box = nullptr;
    void* bell_payload = nullptr;
    bool parked = false;  // inside park()'s wait: only then may it be rung
    bool rung = false;    // a doorbell put is on its way
    bool poked = false;   // an inbox item was posted while it was parked
    // comms[0] is the doorbell's pending get, the rest are puts in flight, oldest first;
    // flights[i] says what comms[i] carries.
    std::vector<simgrid::s4u::CommPtr> comms;
    std::vector<Flight> flights;
    std::deque<Landed> landed;  // finished puts not handled yet
    std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
    std::deque<std::uint32_t> rechecks;  // packets whose QP changed
  };

  std::uint32_t owner(const Packet& p) const;
  SimQp& requester(const Packet& p);
  SimQp& responder(const Packet& p);
  void put(std::uint32_t rank, Flight f, std::uint32_t src, std::uint32_t dst, std::uint32_t rail, std::uint64_t bytes);
  void arm(std::uint32_t packet, double at);
  // Starts a control message's or a probe's put (on its way out or back) now, or after the
  // delay spike in force on its path.
  void send_control(std::uint32_t id, bool delayed);
  void send_probe(Flight f, bool delayed);
  void release(std::uint32_t packet);
  // Records what a wait or test on the rank's comms returned.
  void absorb(std::uint32_t rank, ssize_t done, bool failed);
  void handle_landed(const Landed& l);
  void probe_landed(const Landed& l);
  void handle_timer(Flight f);
  void recheck(std::uint32_t packet);

  // The packet state machine; each step mirrors a part of wire.cpp's carry_data.
  void start_attempt(std::uint32_t packet);
  void leave_host(std::uint32_t packet);
  void start_transfer(std::uint32_t packet);
  void transfer_done(std::uint32_t packet, bool arrived);
  void await_psn(std::uint32_t packet);
  void land(std::uint32_t packet);
  void ack_back(std::uint32_t packet);
  void settle(std::uint32_t packet, PacketOutcome out);
  void await_order(std::uint32_t packet);
  void backoff_done(std::uint32_t packet);

  SimWorld& w_;
  std::vector<RankWire> ranks_;
  std::deque<Packet> packets_;  // a deque: references stay valid while the pool grows
  std::vector<std::uint32_t> free_packets_;
  std::deque<ControlPacket> controls_;
  std::vector<std::uint32_t> free_controls_;
  std::deque<ProbePacket> probes_;
  std::vector<std::uint32_t> free_probes_;
  std::uint64_t timer_order_ = 0;
};

}  // namespace railcheck::sim
