#include "backends/sim/event_wire.hpp"

#include <string>
#include <utility>

#include "backends/sim/qp_ops.hpp"
#include "engine/core/engine_assert.hpp"
#include "engine/core/rc_timeouts.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

// A timer counts as due this close to its instant: a timed wait ends at clock + (at - clock),
// which can fall an ulp short of `at`. 1 ps is far below the nanosecond every figure is read in.
constexpr double kClockSlack = 1e-12;

double sim_clock() { return sg4::Engine::get_clock(); }

// A slot of `pool` for a new packet, reset to its default: a freed one first, else a new one at the end.
template <typename Pool>
std::uint32_t take_slot(Pool& pool, std::vector<std::uint32_t>& free) {
  if (free.empty()) {
    pool.emplace_back();
    return static_cast<std::uint32_t>(pool.size() - 1);
  }
  const std::uint32_t id = free.back();
  free.pop_back();
  pool[id] = typename Pool::value_type{};
  return id;
}

// The one EventWire of the engine now running: SimGrid's signals are process-wide and outlive
// an engine, so the callback, connected once, reaches the wire through this.
EventWire* g_active = nullptr;

}  // namespace

EventWire::EventWire(SimWorld& w) : w_(w), ranks_(w.ranks().size()) {
  static const bool connected = [] {
    sg4::Link::on_communication_state_change_cb(&EventWire::on_network_action);
    return true;
  }();
  (void)connected;
  RAILCHECK_ASSERT(g_active == nullptr, "one event wire per SimGrid engine");
  g_active = this;
}

EventWire::~EventWire() { g_active = nullptr; }

void EventWire::on_network_action(simgrid::kernel::resource::NetworkAction& a,
                                  simgrid::kernel::resource::Action::State /*previous*/) {
  if (g_active == nullptr) return;
  // NetworkAction is declared, not defined, in SimGrid's installed headers; it derives from
  // Action alone (src/kernel/resource/NetworkModel.hpp), so it is one.
  const auto& action = reinterpret_cast<const simgrid::kernel::resource::Action&>(a);
  const auto state = action.get_state();
  using State = simgrid::kernel::resource::Action::State;
  if (state != State::FINISHED && state != State::FAILED) return;
  const auto it = g_active->by_activity_.find(action.get_activity());
  // Not one of ours in flight: another wire's transfer, or a put that failed as it started
  // (its activity is set after that; put() catches it).
  if (it == g_active->by_activity_.end()) return;
  const std::uint32_t id = it->second;
  g_active->by_activity_.erase(it);
  g_active->arrive(id, state == State::FINISHED);
}

std::uint32_t EventWire::owner(const Packet& p) const { return w_.connections()[p.conn].rank(p.from); }
SimQp& EventWire::requester(const Packet& p) { return w_.connections()[p.conn].qps(p.from)[p.path]; }
SimQp& EventWire::responder(const Packet& p) { return w_.connections()[p.conn].qps(other(p.from))[p.path]; }

void EventWire::attach(std::uint32_t rank) { ranks_[rank].bell = sg4::Semaphore::create(0); }

void EventWire::detach(std::uint32_t rank) {
  RankWire& me = ranks_[rank];
  // SimGrid reports a comm freed while it runs; the run is over, so its puts are cancelled.
  while (me.puts != kNone) {
    const std::uint32_t id = me.puts;
    Put& p = puts_[id];
    if (!p.landed) {
      by_activity_.erase(p.comm->get_impl());
      p.comm->cancel();
    }
    me.puts = p.next;
    puts_[id] = Put{};
    free_puts_.push_back(id);
  }
  me.arrived.clear();
}

void EventWire::ring(std::uint32_t rank) {
  RankWire& t = ranks_[rank];
  if (!t.parked || t.woken) return;
  t.woken = true;
  t.waker = kNone;
  t.bell->release();
}

void EventWire::arrive(std::uint32_t put, bool ok) {
  Put& p = puts_[put];
  RAILCHECK_ASSERT(!p.landed, "a put lands once");
  p.landed = true;
  p.ok = ok;
  RankWire& me = ranks_[p.rank];
  me.arrived.emplace(p.order, put);
  if (!me.parked || me.woken) return;
  me.woken = true;
  me.waker = put;
  me.bell->release();
}

void EventWire::poke(std::uint32_t rank) {
  if (ranks_[rank].parked) ranks_[rank].poked = true;
  ring(rank);
}

bool EventWire::take_poke(std::uint32_t rank) { return std::exchange(ranks_[rank].poked, false); }

bool EventWire::has_due(std::uint32_t rank) const {
  const RankWire& me = ranks_[rank];
  return !me.landed.empty() || !me.rechecks.empty() ||
         (!me.timers.empty() && me.timers.top().at <= sim_clock() + kClockSlack);
}

void EventWire::park(std::uint32_t rank, double until) {
  RankWire& me = ranks_[rank];
  if (!me.arrived.empty()) return take_arrived(rank, me.arrived.begin()->second);
  if (!me.timers.empty() && me.timers.top().at < until) until = me.timers.top().at;
  const double timeout = std::max(0.0, until - sim_clock());
  me.parked = true;
  me.woken = false;
  me.waker = kNone;
  bool timed_out = true;
  if (timeout > 0) {
    timed_out = me.bell->acquire_timeout(timeout);
  } else {
    // A semaphore's wait with no time left waits for ever: let the other actors of this instant
    // run once instead, as a wait that times out at once does.
    sg4::this_actor::yield();
  }
  me.parked = false;
  // Released after the wait ended (by its timeout, or there was none): the token is still there.
  if (timed_out && me.woken) me.bell->acquire();
  // A landing that came with the timeout waits for the next park, which takes the oldest.
  if (!timed_out && me.waker != kNone) take_arrived(rank, me.waker);
}

void EventWire::take_arrived(std::uint32_t rank, std::uint32_t first) {
  RankWire& me = ranks_[rank];
  if (puts_[first].ok) return take(first);
  // A link of a put's route went down (or was down when it started). Every put that failed is
  // taken, oldest first.
  std::vector<std::uint32_t> failed;
  for (const auto& [order, id] : me.arrived)
    if (!puts_[id].ok) failed.push_back(id);
  for (const std::uint32_t id : failed) take(id);
}

void EventWire::take(std::uint32_t put) {
  Put& p = puts_[put];
  RankWire& me = ranks_[p.rank];
  RAILCHECK_ASSERT(p.landed, "only a landed put is taken");
  me.arrived.erase(p.order);
  me.landed.push_back(Landed{p.flight, p.ok});
  // Over already: this returns at once (or throws), and frees SimGrid's side of the put.
  try {
    p.comm->wait();
  } catch (const simgrid::NetworkFailureException&) {
    RAILCHECK_ASSERT(!p.ok, "a put SimGrid reported finished does not fail");
  }
  if (p.prev != kNone)
    puts_[p.prev].next = p.next;
  else
    me.puts = p.next;
  if (p.next != kNone) puts_[p.next].prev = p.prev;
  puts_[put] = Put{};
  free_puts_.push_back(put);
}

void EventWire::run_due(std::uint32_t rank) {
  RankWire& me = ranks_[rank];
  // Finished puts and expired timers first, then the packets that those changed (an actor wire
  // woke those by a condition variable, one scheduling round later at the same instant).
  for (;;) {
    if (!me.landed.empty()) {
      const Landed l = me.landed.front();
      me.landed.pop_front();
      handle_landed(l);
    } else if (!me.timers.empty() && me.timers.top().at <= sim_clock() + kClockSlack) {
      const Flight f = me.timers.top().flight;
      me.timers.pop();
      handle_timer(f);
    } else if (!me.rechecks.empty()) {
      const std::uint32_t id = me.rechecks.front();
      me.rechecks.pop_front();
      recheck(id);
    } else {
      return;
    }
  }
}

void EventWire::qp_changed(SimQp& q) {
  if (q.waiters.empty()) return;
  std::vector<std::uint32_t> waiting;
  waiting.swap(q.waiters);
  for (const std::uint32_t id : waiting) {
    const std::uint32_t r = owner(packets_[id]);
    ranks_[r].rechecks.push_back(id);
    ring(r);
  }
}

void EventWire::launch_data(std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn,
                            std::uint32_t generation, const PostedWr& wr) {
  const std::uint32_t id = take_slot(packets_, free_packets_);
  Packet& p = packets_[id];
  p.conn = conn;
  p.from = from;
  p.path = path;
  p.psn = psn;
  p.generation = generation;
  p.wr = wr;
  start_attempt(id);
}

void EventWire::launch_control(std::uint32_t conn, Side from, std::uint32_t path, const ControlMessage& m) {
  const std::uint32_t id = take_slot(controls_, free_controls_);
  controls_[id] = ControlPacket{conn, from, path, m};
  send_control(id, false);
}

void EventWire::send_control(std::uint32_t id, bool delayed) {
  const ControlPacket& cp = controls_[id];
  const SimConnection& c = w_.connections()[cp.conn];
  const std::uint32_t src = c.rank(cp.from);
  const std::uint32_t dst = c.rank(other(cp.from));
  const std::uint32_t rail = c.path_rail[cp.path];
  if (!delayed) {
    if (const Nanos spike = spike_delay(w_, src, dst, rail); spike > Nanos{0}) {
      ranks_[src].timers.push(Timer{sim_clock() + to_seconds(spike), timer_order_++, Flight{Cargo::Control, id}});
      return;
    }
  }
  put(src, Flight{Cargo::Control, id}, src, dst, rail, kControlBytes);
}

void EventWire::launch_probe(std::uint32_t conn, Side from, std::uint32_t path, std::uint64_t nonce) {
  const std::uint32_t id = take_slot(probes_, free_probes_);
  probes_[id] = ProbePacket{conn, from, path, nonce};
  send_probe(Flight{Cargo::ProbeOut, id}, false);
}

void EventWire::send_probe(Flight f, bool delayed) {
  const ProbePacket& pp = probes_[f.id];
  const SimConnection& c = w_.connections()[pp.conn];
  const std::uint32_t home = c.rank(pp.from);
  const std::uint32_t peer = c.rank(other(pp.from));
  const std::uint32_t rail = c.path_rail[pp.path];
  const bool out = f.cargo == Cargo::ProbeOut;
  const std::uint32_t src = out ? home : peer;
  const std::uint32_t dst = out ? peer : home;
  if (!delayed) {
    if (const Nanos spike = spike_delay(w_, src, dst, rail); spike > Nanos{0}) {
      ranks_[home].timers.push(Timer{sim_clock() + to_seconds(spike), timer_order_++, f});
      return;
    }
  }
  // Both puts are the prober's: its actor drives the answer too, from the peer's NIC.
  put(home, f, src, dst, rail, kProbeBytes);
}

void EventWire::probe_landed(const Landed& l) {
  const ProbePacket pp = probes_[l.flight.id];
  const SimConnection& c = w_.connections()[pp.conn];
  const std::uint32_t home = c.rank(pp.from);
  const std::uint32_t peer = c.rank(other(pp.from));
  const std::uint32_t rail = c.path_rail[pp.path];
  const bool out = l.flight.cargo == Cargo::ProbeOut;
  const bool ok = l.ok && !lost_one_way(w_, out ? home : peer, rail);
  if (ok && out) {
    // The peer's NIC answers from its registered word; its process plays no part.
    return send_probe(Flight{Cargo::ProbeBack, l.flight.id}, false);
  }
  free_probes_.push_back(l.flight.id);
  if (!ok) return;
  ++w_.counters().probes_answered;
  w_.post(home, InboxItem::of_event(w_.now(), pp.conn, pp.from, ProbeAnswered{PathIndex{pp.path}, pp.nonce}));
}

void EventWire::put(std::uint32_t rank, Flight f, std::uint32_t src, std::uint32_t dst, std::uint32_t rail,
                    std::uint64_t bytes) {
  SimPlatform& pf = w_.platform();
  sg4::Host* host = pf.nic_host(src, rail);
  if (sg4::this_actor::get_host() != host) sg4::this_actor::set_host(host);
  // The payload is never read (put refuses nullptr): the simulated bytes are what matters.
  sg4::CommPtr comm = pf.nic_mailbox(dst, rail)->put_async(&w_, bytes);
  const std::uint32_t id = take_slot(puts_, free_puts_);
  Put& p = puts_[id];
  p.comm = std::move(comm);
  p.flight = f;
  p.rank = rank;
  p.order = put_order_++;
  RankWire& me = ranks_[rank];
  p.next = me.puts;
  if (me.puts != kNone) puts_[me.puts].prev = id;
  me.puts = id;
  // A link of the route down fails the put as it starts, or did so during the put's simcall
  // (the fault injector's turn_off ran first): either way before its activity could be looked
  // up, so the failure is its landing now.
  if (!pf.route_up(src, dst, rail)) return arrive(id, false);
  by_activity_.emplace(p.comm->get_impl(), id);
}

void EventWire::arm(std::uint32_t packet, double at) {
  ranks_[owner(packets_[packet])].timers.push(Timer{at, timer_order_++, Flight{Cargo::Data, packet}});
}

void EventWire::release(std::uint32_t packet) { free_packets_.push_back(packet); }

void EventWire::handle_landed(const Landed& l) {
  if (l.flight.cargo == Cargo::Data) return transfer_done(l.flight.id, l.ok);
  if (l.flight.cargo == Cargo::ProbeOut || l.flight.cargo == Cargo::ProbeBack) return probe_landed(l);
  // A control message: delivered where it landed, counted lost where a link was down.
  ControlPacket cp = std::move(controls_[l.flight.id]);
  free_controls_.push_back(l.flight.id);
  const SimConnection& c = w_.connections()[cp.conn];
  const Side to = other(cp.from);
  const std::uint32_t rail = c.path_rail[cp.path];
  const LossFate fate = l.ok ? message_fate(w_, c.rank(cp.from), rail, kControlBytes) : LossFate::Lost;
  if (fate == LossFate::Lost) {
    ++w_.counters().control_lost;
    return;
  }
  // On TCP a control message hit by a partial loss is sent again a round trip later, not lost.
  const Nanos late =
      fate == LossFate::Repaired ? from_seconds(round_trip(w_, c.rank(cp.from), c.rank(to), rail)) : Nanos{0};
  w_.post(c.rank(to), InboxItem::of_event(w_.now() + late, cp.conn, to,
                                          ControlReceived{ControlChannel::on(PathIndex{cp.path}), std::move(cp.message)}));
}

void EventWire::handle_timer(Flight f) {
  if (f.cargo == Cargo::Control) return send_control(f.id, true);
  if (f.cargo == Cargo::ProbeOut || f.cargo == Cargo::ProbeBack) return send_probe(f, true);
  const std::uint32_t packet = f.id;
  switch (packets_[packet].stage) {
    case PacketStage::HostQueue: return leave_host(packet);
    case PacketStage::Jitter: return start_transfer(packet);
    case PacketStage::AckFlight: return ack_back(packet);
    case PacketStage::Backoff: return backoff_done(packet);
    case PacketStage::Repair:
      if (requester(packets_[packet]).generation != packets_[packet].generation) return release(packet);
      return await_psn(packet);
    default: break;
  }
}

void EventWire::recheck(std::uint32_t packet) {
  switch (packets_[packet].stage) {
    case PacketStage::AwaitPsn: return await_psn(packet);
    case PacketStage::AwaitOrder: return await_order(packet);
    default: break;
  }
}

// The top of carry_data's retry loop: one more attempt while the requester is still the QP
// generation the WR was posted on.
void EventWire::start_attempt(std::uint32_t packet) {
  Packet& p = packets_[packet];
  if (requester(p).generation != p.generation) return release(packet);
  p.attempt = sim_clock();
  ++w_.counters().data_packets;
  const double ready = host_ready_at(w_, requester(p), p.wr.bytes, p.attempt);
  if (ready > p.attempt) {
    p.stage = PacketStage::HostQueue;
    return arm(packet, ready);
  }
  leave_host(packet);
}

// The message's bytes leave the host now: the spike and jitter in force then (data_delay).
void EventWire::leave_host(std::uint32_t packet) {
  Packet& p = packets_[packet];
  const SimConnection& c = w_.connections()[p.conn];
  const std::uint32_t src = c.rank(p.from);
  const std::uint32_t dst = c.rank(other(p.from));
  const std::uint32_t rail = c.path_rail[p.path];
  const Nanos delay = data_delay(w_, src, dst, rail, requester(p).host_free_at);
  if (delay > Nanos{0}) {
    p.stage = PacketStage::Jitter;
    return arm(packet, sim_clock() + to_seconds(delay));
  }
  start_transfer(packet);
}

void EventWire::start_transfer(std::uint32_t packet) {
  Packet& p = packets_[packet];
  p.stage = PacketStage::Transfer;
  const SimConnection& c = w_.connections()[p.conn];
  const std::uint64_t bytes = p.wr.bytes;
  put(c.rank(p.from), Flight{Cargo::Data, packet}, c.rank(p.from), c.rank(other(p.from)), c.path_rail[p.path],
      bytes > 0 ? bytes : 1);
}

void EventWire::transfer_done(std::uint32_t packet, bool arrived) {
  Packet& p = packets_[packet];
  if (requester(p).generation != p.generation) return release(packet);
  const SimConnection& c = w_.connections()[p.conn];
  if (!arrived) return settle(packet, PacketOutcome::Lost);  // nothing comes back: no ACK flight
  const std::uint32_t src = c.rank(p.from), dst = c.rank(other(p.from)), rail = c.path_rail[p.path];
  switch (message_fate(w_, src, rail, p.wr.bytes)) {
    case LossFate::Through: break;
    case LossFate::Repaired:
      ++w_.counters().retransmissions;
      p.stage = PacketStage::Repair;
      return arm(packet, sim_clock() + round_trip(w_, src, dst, rail));
    case LossFate::Lost: return settle(packet, PacketOutcome::Lost);
  }
  await_psn(packet);
}

// The responder accepts packets in PSN order only.
void EventWire::await_psn(std::uint32_t packet) {
  Packet& p = packets_[packet];
  if (requester(p).generation != p.generation) return release(packet);
  SimQp& r = responder(p);
  if (r.accepts_packets() && r.expected_psn < p.psn) {
    p.stage = PacketStage::AwaitPsn;
    r.waiters.push_back(packet);
    return;
  }
  land(packet);
}

void EventWire::land(std::uint32_t packet) {
  Packet& p = packets_[packet];
  const PacketOutcome out = land_packet(w_, p.conn, p.from, p.path, p.psn, p.wr);
  // The ACK (or RNR NAK) travels back over the same two links.
  const SimConnection& c = w_.connections()[p.conn];
  p.outcome = out;
  p.stage = PacketStage::AckFlight;
  const std::uint32_t src = c.rank(other(p.from));
  const std::uint32_t dst = c.rank(p.from);
  const std::uint32_t rail = c.path_rail[p.path];
  arm(packet,
      sim_clock() + w_.platform().one_way_latency(src, dst, rail) + to_seconds(spike_delay(w_, src, dst, rail)));
}

void EventWire::ack_back(std::uint32_t packet) {
  Packet& p = packets_[packet];
  const SimConnection& c = w_.connections()[p.conn];
  const std::uint32_t responder_rank = c.rank(other(p.from));
  const std::uint32_t rail = c.path_rail[p.path];
  PacketOutcome out = p.outcome;
  if (!w_.platform().route_up(responder_rank, c.rank(p.from), rail) || ack_lost(w_, responder_rank, rail))
    out = PacketOutcome::Lost;
  if (requester(p).generation != p.generation) return release(packet);
  settle(packet, out);
}

void EventWire::settle(std::uint32_t packet, PacketOutcome out) {
  Packet& p = packets_[packet];
  const QpReliability rel = w_.scenario().engine.qp;
  switch (out) {
    case PacketOutcome::Acked: return await_order(packet);
    case PacketOutcome::Rnr:
      ++w_.counters().rnr_naks;
      if (!rnr_retries_forever(rel) && ++p.rnr > rel.rnr_retry) {
        sim_requester_error(w_, p.conn, p.from, p.path, WcStatus::RnrRetryExcErr);
        return release(packet);
      }
      // The HCA waits out the whole RNR delay, even if a receive is posted sooner.
      p.stage = PacketStage::Backoff;
      p.give_up = false;
      return arm(packet, sim_clock() + to_seconds(rnr_delay(rel.min_rnr_timer)));
    case PacketOutcome::Lost: {
      ++w_.counters().retransmissions;
      // The local ACK timeout (or the transport's RTO) runs from the start of the attempt.
      const RetryPlan next = after_loss(w_, p.attempt, ++p.retries);
      p.give_up = next.give_up;
      const double wait = next.at - sim_clock();
      if (wait > 0) {
        p.stage = PacketStage::Backoff;
        return arm(packet, sim_clock() + wait);
      }
      return backoff_done(packet);
    }
  }
}

void EventWire::backoff_done(std::uint32_t packet) {
  Packet& p = packets_[packet];
  if (!p.give_up) return start_attempt(packet);
  if (requester(p).generation == p.generation) sim_requester_error(w_, p.conn, p.from, p.path, WcStatus::RetryExcErr);
  release(packet);
}

// Completions are reported in PSN order.
void EventWire::await_order(std::uint32_t packet) {
  Packet& p = packets_[packet];
  SimQp& s = requester(p);
  if (s.generation != p.generation) return release(packet);
  if (s.next_completion_psn != p.psn) {
    p.stage = PacketStage::AwaitOrder;
    s.waiters.push_back(packet);
    return;
  }
  s.outstanding.erase(p.psn);
  ++s.next_completion_psn;
  w_.qp_changed(s);
  const CompletionEvent done{
      PathIndex{p.path}, p.wr.id, p.wr.opcode, WcStatus::Success, static_cast<std::uint32_t>(p.wr.bytes), std::nullopt};
  const std::uint32_t conn = p.conn;
  const Side from = p.from;
  release(packet);
  sim_complete(w_, conn, from, done);
}

}  // namespace railcheck::sim
