#pragma once
// WireMode::Event: packets without actors. Each data packet's life (wire.hpp lists the RC rules:
// jitter, transfer, PSN order at the responder, RNR and ACK-timeout retries, completion in PSN
// order) is a small state machine, and each control message a put; both are driven by the actor
// of the rank that sent them, which waits for its puts' landings and its packet timers at once
// and runs the rank's engines in the same loop (RankDriver::run_event_loop).
//
// Four SimGrid 3.32 facts shape it:
//   - A put is routed from the putting actor's host. The rank actor moves to the source NIC
//     host (`this_actor::set_host`) to start a put there, and stays there: it waits on a
//     semaphore, which a wait from any host serves, and each move walks every comm the actor
//     holds (docs/benchmarks.md, 2026-11-28).
//   - Waiting on all of a rank's puts at once (`Comm::wait_any_for`) costs, at every wake, a copy
//     of the list and a registration on each comm: O(puts in flight) per landing, 22 % of a
//     4096 x 8 run (docs/benchmarks.md, 2026-11-28). So a rank waits on one semaphore only, and
//     its landings are reported to it as they happen, O(1) each: `Link::on_communication_state_
//     change` fires in SimGrid's kernel when a network action finishes or fails (a link of its
//     route went down), and the put it belongs to is found by its kernel activity.
//   - A put the rank never waits on stays in its actor's activity list, so each landed put is
//     still waited on once (it is over: the wait returns at once, or throws if it failed).
//   - The NIC mailboxes keep their permanent receivers (wire.hpp), which drain delivered comms.
#include <cstdint>
#include <deque>
#include <map>
#include <queue>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u.hpp>
#include <unordered_map>
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
  ~EventWire();
  EventWire(const EventWire&) = delete;
  EventWire& operator=(const EventWire&) = delete;

  // The calling actor becomes rank `rank`'s driver: its doorbell.
  void attach(std::uint32_t rank);
  // Cancels the rank's puts in flight; the rank's actor is ending.
  void detach(std::uint32_t rank);

  // Called by the sender's rank actor (RankDriver::execute), like wire.hpp's launch_*.
  void launch_data(std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn, std::uint32_t generation,
                   const PostedWr& wr);
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
  // Waits until one of the rank's puts lands (or fails), its doorbell rings, or SimGrid's clock
  // reaches `until` or the rank's next packet timer, whichever is first. A put that landed while
  // the rank was running is taken at once, oldest first (as a wait on all of them would).
  void park(std::uint32_t rank, double until);

 private:
  struct Packet {
    std::uint32_t conn = 0;
    Side from = Side::Sender;
    std::uint32_t path = 0;
    std::uint32_t psn = 0;
    std::uint32_t generation = 0;
    PostedWr wr;
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
  enum class Cargo : std::uint8_t { Data, Control, ProbeOut, ProbeBack };
  struct Flight {
    Cargo cargo = Cargo::Data;
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
  static constexpr std::uint32_t kNone = UINT32_MAX;
  // A put in flight, from its start until its rank has taken its landing.
  struct Put {
    simgrid::s4u::CommPtr comm;  // the sender's side: waited on once, after it landed
    Flight flight;
    std::uint32_t rank = 0;
    std::uint64_t order = 0;                   // the rank's puts in the order they started
    bool landed = false;                       // finished or failed; in its rank's `arrived`
    bool ok = false;                           // finished (not failed)
    std::uint32_t prev = kNone, next = kNone;  // the rank's puts in flight, for detach()
  };
  struct RankWire {
    // The doorbell: a parked rank waits on it; ring() and the first landing while it is parked
    // release it, once per park.
    simgrid::s4u::SemaphorePtr bell;
    bool parked = false;                             // inside park()'s wait: only then is it released
    bool woken = false;                              // released during this park
    bool poked = false;                              // an inbox item was posted while it was parked
    std::uint32_t waker = kNone;                     // the put whose landing released it (else a ring or the timeout)
    std::uint32_t puts = kNone;                      // its puts in flight (a list through Put::prev/next)
    std::map<std::uint64_t, std::uint32_t> arrived;  // landed puts not taken yet, by Put::order
    std::deque<Landed> landed;                       // taken landings not handled yet
    std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
    std::deque<std::uint32_t> rechecks;  // packets whose QP changed
  };

  // SimGrid's kernel reports that a network action finished or failed (maestro context).
  static void on_network_action(simgrid::kernel::resource::NetworkAction& a,
                                simgrid::kernel::resource::Action::State previous);
  // Put `put` landed (ok) or failed: it waits in its rank's `arrived`, and wakes a parked rank.
  void arrive(std::uint32_t put, bool ok);
  // Takes landed put `put` off the rank's books into its `landed` queue, after the wait that
  // frees SimGrid's side of it.
  void take(std::uint32_t put);
  // The rank's first landed put (the one that woke it, else the oldest) into `landed`; if it
  // failed, every failed one with it, oldest first (a wait on all puts throws once for those).
  void take_arrived(std::uint32_t rank, std::uint32_t first);

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
  std::deque<Put> puts_;
  std::vector<std::uint32_t> free_puts_;
  // Puts in flight by their kernel activity (Comm::get_impl), for on_network_action.
  std::unordered_map<const simgrid::kernel::activity::ActivityImpl*, std::uint32_t> by_activity_;
  std::uint64_t put_order_ = 0;
  std::deque<ProbePacket> probes_;
  std::vector<std::uint32_t> free_probes_;
  std::uint64_t timer_order_ = 0;
};

}  // namespace railcheck::sim
