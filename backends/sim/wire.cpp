#include "backends/sim/wire.hpp"

#include <fmt/format.h>

#include <cmath>

#include "backends/sim/event_wire.hpp"
#include "backends/sim/qp_ops.hpp"
#include "engine/core/rc_timeouts.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

// Carry `bytes` from NIC (src, rail) to NIC (dst, rail) in the calling actor, which runs on the
// source NIC host. Throws simgrid::NetworkFailureException if a link of the route goes down.
void transfer(SimWorld& w, std::uint32_t src, std::uint32_t dst, std::uint32_t rail, std::uint64_t bytes) {
  SimPlatform& p = w.platform();
  if (w.wire() == WireMode::Sendto) {
    sg4::Comm::sendto(p.nic_host(src, rail), p.nic_host(dst, rail), bytes);
  } else {
    // The payload is never read (put refuses nullptr): the simulated bytes are what matters.
    p.nic_mailbox(dst, rail)->put(&w, bytes);
  }
}

// Wait until `pred` holds or the requester QP moves on to another generation.
template <typename Pred>
bool wait_on(SimQp& q, SimQp& requester, std::uint32_t gen, Pred pred) {
  std::unique_lock<sg4::Mutex> lock(*q.mutex);
  while (requester.generation == gen && !pred()) q.changed->wait(lock);
  return requester.generation == gen;
}

void carry_data(SimWorld* wp, std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn, std::uint32_t gen,
                PostedWr wr) {
  SimWorld& w = *wp;
  SimConnection& c = w.connections()[conn];
  const Side to = other(from);
  const std::uint32_t src = c.rank(from);
  const std::uint32_t dst = c.rank(to);
  const std::uint32_t rail = c.path_rail[path];
  SimQp& S = c.qps(from)[path];
  SimQp& R = c.qps(to)[path];
  const QpReliability rel = w.scenario().engine.qp;
  const std::uint64_t bytes = wr.bytes;
  std::uint32_t retries = 0;
  std::uint32_t rnr = 0;

  while (S.generation == gen) {
    const double attempt = sg4::Engine::get_clock();
    ++w.counters().data_packets;
    bool arrived = true;
    try {
      const double ready = host_ready_at(w, S, bytes, attempt);
      if (ready > attempt) sg4::this_actor::sleep_for(ready - attempt);
      const Nanos delay = data_delay(w, src, dst, rail, S.host_free_at);
      if (delay > Nanos{0}) sg4::this_actor::sleep_for(to_seconds(delay));
      transfer(w, src, dst, rail, bytes > 0 ? bytes : 1);
      switch (message_fate(w, src, rail, bytes)) {
        case LossFate::Through: break;
        case LossFate::Repaired:  // TCP's fast retransmit: a round trip late
          ++w.counters().retransmissions;
          sg4::this_actor::sleep_for(round_trip(w, src, dst, rail));
          break;
        case LossFate::Lost: arrived = false; break;
      }
    } catch (const simgrid::NetworkFailureException&) {
      arrived = false;
    }
    if (S.generation != gen) return;

    PacketOutcome out = PacketOutcome::Lost;
    if (arrived) {
      // The responder accepts packets in PSN order only.
      if (!wait_on(R, S, gen, [&] { return !R.accepts_packets() || R.expected_psn >= psn; })) return;
      out = land_packet(w, conn, from, path, psn, wr);
      // The ACK (or RNR NAK) travels back over the same two links.
      sg4::this_actor::sleep_for(w.platform().one_way_latency(dst, src, rail) +
                                 to_seconds(spike_delay(w, dst, src, rail)));
      if (!w.platform().route_up(dst, src, rail) || ack_lost(w, dst, rail)) out = PacketOutcome::Lost;
    }
    if (S.generation != gen) return;

    switch (out) {
      case PacketOutcome::Acked:
        // Completions are reported in PSN order.
        if (!wait_on(S, S, gen, [&] { return S.next_completion_psn == psn; })) return;
        S.outstanding.erase(psn);
        ++S.next_completion_psn;
        S.notify();
        sim_complete(w, conn, from,
                     CompletionEvent{PathIndex{path}, wr.id, wr.opcode, WcStatus::Success,
                                     static_cast<std::uint32_t>(bytes), std::nullopt});
        return;
      case PacketOutcome::Rnr:
        ++w.counters().rnr_naks;
        if (!rnr_retries_forever(rel) && ++rnr > rel.rnr_retry) {
          sim_requester_error(w, conn, from, path, WcStatus::RnrRetryExcErr);
          return;
        }
        {
          // Retry after the RNR delay, or as soon as a receive is posted, whichever is later
          // for the HCA: it waits the full delay.
          sg4::this_actor::sleep_for(to_seconds(rnr_delay(rel.min_rnr_timer)));
        }
        break;
      case PacketOutcome::Lost: {
        ++w.counters().retransmissions;
        const RetryPlan next = after_loss(w, attempt, ++retries);
        const double wait = next.at - sg4::Engine::get_clock();
        if (wait > 0) sg4::this_actor::sleep_for(wait);
        if (next.give_up) {
          if (S.generation == gen) sim_requester_error(w, conn, from, path, WcStatus::RetryExcErr);
          return;
        }
        break;
      }
    }
  }
}

void carry_control(SimWorld* wp, std::uint32_t conn, Side from, std::uint32_t path, ControlMessage m) {
  SimWorld& w = *wp;
  SimConnection& c = w.connections()[conn];
  const Side to = other(from);
  const std::uint32_t rail = c.path_rail[path];
  if (const Nanos spike = spike_delay(w, c.rank(from), c.rank(to), rail); spike > Nanos{0})
    sg4::this_actor::sleep_for(to_seconds(spike));
  try {
    transfer(w, c.rank(from), c.rank(to), rail, kControlBytes);
  } catch (const simgrid::NetworkFailureException&) {
    ++w.counters().control_lost;
    return;
  }
  const LossFate fate = message_fate(w, c.rank(from), rail, kControlBytes);
  if (fate == LossFate::Lost) {
    ++w.counters().control_lost;
    return;
  }
  // On TCP a control message hit by a partial loss is sent again a round trip later, not lost.
  if (fate == LossFate::Repaired) sg4::this_actor::sleep_for(round_trip(w, c.rank(from), c.rank(to), rail));
  w.post(c.rank(to),
         InboxItem::of_event(w.now(), conn, to, ControlReceived{ControlChannel::on(PathIndex{path}), std::move(m)}));
}

// The probe's round trip in its own actor: out to the peer's NIC, which answers from its
// registered word without the peer's CPU, and back.
void carry_probe(SimWorld* wp, std::uint32_t conn, Side from, std::uint32_t path, std::uint64_t nonce) {
  SimWorld& w = *wp;
  SimConnection& c = w.connections()[conn];
  const std::uint32_t src = c.rank(from);
  const std::uint32_t dst = c.rank(other(from));
  const std::uint32_t rail = c.path_rail[path];
  const auto spike = [&w](std::uint32_t a, std::uint32_t b, std::uint32_t k) {
    if (const Nanos d = spike_delay(w, a, b, k); d > Nanos{0}) sg4::this_actor::sleep_for(to_seconds(d));
  };
  try {
    spike(src, dst, rail);
    transfer(w, src, dst, rail, kProbeBytes);
    if (lost_one_way(w, src, rail)) return;
    // A put is routed from the putting actor's host: answer from the peer's NIC.
    sg4::this_actor::set_host(w.platform().nic_host(dst, rail));
    spike(dst, src, rail);
    transfer(w, dst, src, rail, kProbeBytes);
    if (lost_one_way(w, dst, rail)) return;
  } catch (const simgrid::NetworkFailureException&) {
    return;
  }
  ++w.counters().probes_answered;
  w.post(src, InboxItem{w.now(), 0, conn, from, Event{ProbeAnswered{PathIndex{path}, nonce}}});
}

// One background flow of an incast: back-to-back transfers of a millisecond's worth of the
// link's bandwidth from `src` into `dst` on `rail` until `until`.
void incast_flow(SimWorld* wp, std::uint32_t src, std::uint32_t dst, std::uint32_t rail, Nanos until) {
  SimWorld& w = *wp;
  const auto chunk = static_cast<std::uint64_t>(w.scenario().topology.nic.link_gbps * 1e9 / 8 * 1e-3);
  while (w.now() < until && !w.stopping()) {
    // Each chunk waits out a delay spike as the packets do: that paces the flow as the extra
    // link latency it replaces did.
    if (const Nanos spike = spike_delay(w, src, dst, rail); spike > Nanos{0})
      sg4::this_actor::sleep_for(to_seconds(spike));
    try {
      transfer(w, src, dst, rail, chunk > 0 ? chunk : 1);
    } catch (const simgrid::NetworkFailureException&) {
      sg4::this_actor::sleep_for(1e-3);  // a link is down: try again a millisecond later
    }
  }
}

}  // namespace

RetryPlan after_loss(const SimWorld& w, double attempt, std::uint32_t retries) {
  if (const Nanos rto = w.scenario().topology.nic.transport_rto; rto > Nanos{0}) {
    const int doublings = static_cast<int>(std::min<std::uint32_t>(retries > 0 ? retries - 1 : 0, 12));
    return RetryPlan{attempt + std::ldexp(to_seconds(rto), doublings), false};
  }
  const QpReliability rel = w.scenario().engine.qp;
  return RetryPlan{attempt + to_seconds(ack_timeout(rel.timeout)), retries > rel.retry_cnt};
}

double host_ready_at(const SimWorld& w, SimQp& requester, std::uint64_t bytes, double now) {
  const double gbps = w.scenario().topology.nic.host_gbps;
  if (gbps <= 0) return now;
  const double begin = std::max(now, requester.host_free_at);
  requester.host_free_at = begin + static_cast<double>(bytes) * 8.0 / (gbps * 1e9);
  return requester.host_free_at;
}

LossFate message_fate(SimWorld& w, std::uint32_t src, std::uint32_t rail, std::uint64_t bytes) {
  const NicPreset& nic = w.scenario().topology.nic;
  if (nic.transport_rto <= Nanos{0}) return lost_one_way(w, src, rail) ? LossFate::Lost : LossFate::Through;
  const double p = one_way_loss(w.scenario().faults, LinkRef{src, rail}, w.now());
  if (p <= 0) return LossFate::Through;
  if (p >= 1) return LossFate::Lost;
  const double segments = std::ceil(static_cast<double>(std::max<std::uint64_t>(bytes, 1)) /
                                    static_cast<double>(std::max<std::uint32_t>(nic.mtu, 1)));
  return w.rng().unit() < 1 - std::pow(1 - p, segments) ? LossFate::Repaired : LossFate::Through;
}

bool ack_lost(SimWorld& w, std::uint32_t src, std::uint32_t rail) {
  if (w.scenario().topology.nic.transport_rto <= Nanos{0}) return lost_one_way(w, src, rail);
  return one_way_loss(w.scenario().faults, LinkRef{src, rail}, w.now()) >= 1;
}

double round_trip(SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail) {
  return w.platform().one_way_latency(a, b, rail) + w.platform().one_way_latency(b, a, rail);
}

bool lost_one_way(SimWorld& w, std::uint32_t src, std::uint32_t rail) {
  const double p = one_way_loss(w.scenario().faults, LinkRef{src, rail}, w.now());
  if (p <= 0) return false;
  if (p >= 1) return true;
  return w.rng().unit() < p;
}

void launch_probe(SimWorld& w, std::uint32_t conn, Side from, std::uint32_t path, std::uint64_t nonce) {
  ++w.counters().probes;
  if (w.wire() == WireMode::Event) return w.event_wire().launch_probe(conn, from, path, nonce);
  SimConnection& c = w.connections()[conn];
  auto* host = w.platform().nic_host(c.rank(from), c.path_rail[path]);
  sg4::Actor::create("probe", host, carry_probe, &w, conn, from, path, nonce)->daemonize();
}

void start_incast_flows(SimWorld& w) {
  const Scenario& sc = w.scenario();
  for (const Incast& in : sc.faults.incasts) {
    for (std::uint32_t f = 0; f < in.flows; ++f) {
      // From the other ranks in turn: with two ranks every flow comes from the peer.
      const std::uint32_t src = (in.link.rank + 1 + f % (sc.topology.ranks - 1)) % sc.topology.ranks;
      auto* host = w.platform().nic_host(src, in.link.rail);
      auto actor = sg4::Actor::create("incast", host, [wp = &w, src, in] {
        const double wait = wp->to_clock(in.at) - sg4::Engine::get_clock();
        if (wait > 0) sg4::this_actor::sleep_for(wait);
        incast_flow(wp, src, in.link.rank, in.link.rail, in.until);
      });
      actor->daemonize();
    }
  }
}

PacketOutcome land_packet(SimWorld& w, std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn,
                          const PostedWr& wr) {
  const Side to = other(from);
  SimQp& r = w.connections()[conn].qps(to)[path];
  if (!r.accepts_packets()) return PacketOutcome::Lost;   // a QP in ERR or RESET drops it silently
  if (psn < r.expected_psn) return PacketOutcome::Acked;  // a retransmission of one that landed: ACK again
  if (r.recv_queue.empty()) return PacketOutcome::Rnr;
  const PostedWr recv = r.recv_queue.front();
  r.recv_queue.pop_front();
  if (recv.has_sge && wr.has_sge) w.memory()[recv.first_addr] = wr.first_addr;
  ++r.expected_psn;
  w.qp_changed(r);
  sim_complete(w, conn, to,
               CompletionEvent{PathIndex{path}, recv.id, WrOpcode::Recv, WcStatus::Success,
                               static_cast<std::uint32_t>(wr.bytes), wr.imm});
  return PacketOutcome::Acked;
}

Nanos jitter_delay(SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail) {
  return jitter_delay(w, a, b, rail, w.now());
}

Nanos jitter_delay(SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail, Nanos now) {
  Nanos spread{0};
  for (const auto& j : w.scenario().faults.jitters) {
    const bool ours = j.link.rail == rail && (j.link.rank == a || j.link.rank == b);
    if (ours && j.at <= now && now < j.until) spread += j.spread;
  }
  if (spread <= Nanos{0}) return Nanos{0};
  return Nanos{static_cast<std::int64_t>(w.rng().below(static_cast<std::uint64_t>(spread.count())))};
}

Nanos spike_delay(const SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail) {
  return spike_delay(w, a, b, rail, w.now());
}

Nanos spike_delay(const SimWorld& w, std::uint32_t a, std::uint32_t b, std::uint32_t rail, Nanos at) {
  const FaultProfile& f = w.scenario().faults;
  if (f.jitters.empty()) return Nanos{0};
  return extra_latency(f, LinkRef{a, rail}, at) + extra_latency(f, LinkRef{b, rail}, at);
}

Nanos data_delay(SimWorld& w, std::uint32_t src, std::uint32_t dst, std::uint32_t rail, double leaves) {
  // `leaves` is on SimGrid's clock, which runs on across the runs of one process; the faults'
  // times are on the world's (SimWorld::now(), from this run's start): carry the offset over.
  const Nanos at = w.now() + from_seconds(std::max(0.0, leaves - sg4::Engine::get_clock()));
  return spike_delay(w, src, dst, rail, at) + jitter_delay(w, src, dst, rail, at);
}

void start_permanent_receiver(sg4::Host* host, sg4::Mailbox* mbox) {
  // Senders learn of delivery from their own put; this actor only takes delivered (or failed)
  // transfers off the mailbox so that none stays queued.
  auto actor = sg4::Actor::create("rx", host, [mbox] {
    for (;;) {
      try {
        mbox->get<void>();
      } catch (const simgrid::NetworkFailureException&) {
        // The sender saw the same failure and handles it.
      }
    }
  });
  actor->daemonize();
  mbox->set_receiver(actor);
}

void start_nic_receivers(SimWorld& w) {
  SimPlatform& p = w.platform();
  for (std::uint32_t r = 0; r < p.ranks(); ++r)
    for (std::uint32_t k = 0; k < p.rails(); ++k) start_permanent_receiver(p.nic_host(r, k), p.nic_mailbox(r, k));
}

void launch_data_packet(SimWorld& w, std::uint32_t conn, Side from, std::uint32_t path, std::uint32_t psn,
                        std::uint32_t generation, const PostedWr& wr) {
  if (w.wire() == WireMode::Event) return w.event_wire().launch_data(conn, from, path, psn, generation, wr);
  SimConnection& c = w.connections()[conn];
  auto* host = w.platform().nic_host(c.rank(from), c.path_rail[path]);
  sg4::Actor::create("wr", host, carry_data, &w, conn, from, path, psn, generation, wr)->daemonize();
}

void launch_control(SimWorld& w, std::uint32_t conn, Side from, const ControlChannel& ch, const ControlMessage& m) {
  ++w.counters().control_messages;
  SimConnection& c = w.connections()[conn];
  const Side to = other(from);
  if (ch.out_of_band) {
    w.post(c.rank(to), InboxItem::of_event(w.now() + kOobLatency, conn, to, ControlReceived{ch, m}));
    return;
  }
  if (w.wire() == WireMode::Event) return w.event_wire().launch_control(conn, from, ch.path.value, m);
  auto* host = w.platform().nic_host(c.rank(from), c.path_rail[ch.path.value]);
  sg4::Actor::create("ctl", host, carry_control, &w, conn, from, ch.path.value, m)->daemonize();
}

}  // namespace railcheck::sim
