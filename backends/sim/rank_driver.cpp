#include "backends/sim/rank_driver.hpp"

#include <algorithm>

#include "backends/sim/event_wire.hpp"
#include "backends/sim/qp_ops.hpp"
#include "backends/sim/wire.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {

void RankDriver::operator()() {
  if (w_.wire() == WireMode::Event) {
    w_.event_wire().attach(rank_);
    start();
    return run_event_loop();
  }
  start();
  SimRank& me = w_.ranks()[rank_];
  const Nanos limit = w_.scenario().time_limit;
  while (!w_.stopping()) {
    const Nanos now = w_.now();
    if (const auto until = stalled_until(w_.scenario().faults, rank_, now)) {
      // The process is stopped: nothing of it runs until the stall ends. Its NICs (the wire
      // actors) carry on, and what they complete waits in the inbox, as in a real CQ.
      std::unique_lock<sg4::Mutex> lock(*me.mutex);
      me.wake->wait_until(lock, w_.to_clock(*until));
      continue;
    }
    while (!me.inbox.empty() && me.inbox.top().at <= now) {
      InboxItem item = me.inbox.top();
      me.inbox.pop();
      dispatch(item);
    }
    fire_due_timers(now);
    pump_users(now);
    if (w_.all_done() || now >= limit) {
      w_.stop();
      break;
    }
    // Taking the mutex is a simcall, and other actors run while we are inside it: a wire actor
    // may post (and notify) right then, before we wait. So look at the inbox again once the
    // lock is held — nothing can slip in between that check and the wait.
    std::unique_lock<sg4::Mutex> lock(*me.mutex);
    if (!me.inbox.empty() && me.inbox.top().at <= w_.now()) continue;
    me.wake->wait_until(lock, w_.to_clock(next_deadline(w_.now())));
  }
}

void RankDriver::run_event_loop() {
  EventWire& wire = w_.event_wire();
  SimRank& me = w_.ranks()[rank_];
  const Nanos limit = w_.scenario().time_limit;
  // The users (StreamWorkload) are pumped only where the condition-variable loop above would
  // have woken: at the start, when something was posted to this rank, when an inbox item or a
  // timer fell due, at its own deadline. Its packets wake this actor far more often, and a user
  // that reposts receives whenever its rank looks would change what is simulated.
  bool users_due = true;
  Nanos deadline{0};
  while (!w_.stopping()) {
    wire.run_due(rank_);
    const Nanos now = w_.now();
    if (const auto until = stalled_until(w_.scenario().faults, rank_, now)) {
      // The process is stopped; this actor also plays its NICs (the packets it sent), and those
      // keep running. Its inbox waits, as a CQ does, until the stall ends.
      wire.take_poke(rank_);
      if (!wire.has_due(rank_)) wire.park(rank_, w_.to_clock(*until));
      users_due = true;
      continue;
    }
    if (wire.take_poke(rank_) || now >= deadline) users_due = true;
    while (!me.inbox.empty() && me.inbox.top().at <= now) {
      InboxItem item = me.inbox.top();
      me.inbox.pop();
      dispatch(item);
      users_due = true;
    }
    if (fire_due_timers(now)) users_due = true;
    if (users_due) pump_users(now);
    users_due = false;
    if (w_.all_done() || now >= limit) {
      w_.stop();
      break;
    }
    // From here to the wait there is no simcall, so no other actor runs: whatever another rank
    // posts after this look rings the doorbell (EventWire::ring).
    if (w_.stopping()) break;
    if ((!me.inbox.empty() && me.inbox.top().at <= now) || wire.has_due(rank_)) continue;
    deadline = next_deadline(now);
    wire.park(rank_, w_.to_clock(deadline));
  }
  wire.detach(rank_);
}

void RankDriver::start() {
  for (const auto& [conn, side] : w_.ranks()[rank_].sides) {
    SimConnection& c = w_.connections()[conn];
    Actions acts;
    if (side == Side::Receiver) {
      const ConnectionHandle h = c.receiver->listen(acts);
      const auto bytes = encode_handle(h);
      c.handle.assign(bytes.begin(), bytes.end());
      execute(conn, side, acts);
      feed(conn, side, Event{c.workload->recv_region()});
      // The bootstrap carries the handle to the connector (NCCL's allgather of handles).
      w_.post(c.sender_rank, InboxItem{w_.now() + kOobLatency, 0, conn, Side::Sender, StartConnect{}});
    } else {
      feed(conn, side, Event{c.workload->send_region()});
    }
  }
}

void RankDriver::dispatch(const InboxItem& item) {
  if (std::holds_alternative<StartConnect>(item.what)) {
    SimConnection& c = w_.connections()[item.conn];
    Actions acts;
    auto ok = c.sender->connect(w_.now(), c.handle, acts);
    if (!ok) {
      // A handle our own listener produced must decode; anything else is a driver bug.
      c.workload->mark_failed(w_.now());
      w_.note_progress(item.conn);
      w_.traces().push_back(TraceRecord{w_.now(), rank_, item.conn, Side::Sender,
                                        TraceNote{TraceKind::ConnectionFailed, PathIndex{0}, 0, ok.error().message()}});
    }
    execute(item.conn, Side::Sender, acts);
    return;
  }
  feed(item.conn, item.side, std::get<Event>(item.what));
}

void RankDriver::feed(std::uint32_t conn, Side side, const Event& ev) {
  Actions acts;
  ++w_.counters().events;
  w_.connections()[conn].engine(side).handle(w_.now(), ev, acts);
  execute(conn, side, acts);
}

void RankDriver::execute(std::uint32_t conn, Side side, Actions& actions) {
  SimConnection& c = w_.connections()[conn];
  SimRank& me = w_.ranks()[rank_];
  const Nanos now = w_.now();
  RunObserver* const observer = w_.observer();
  if (observer != nullptr) observer->before_actions(w_, conn, side, actions);
  for (Action& a : actions) {
    ++w_.counters().actions;
    if (auto* p = std::get_if<PostSend>(&a)) {
      sim_post_send(w_, conn, side, p->path.value, p->wr);
    } else if (auto* p = std::get_if<PostRecv>(&a)) {
      sim_post_recv(w_, conn, side, p->path.value, p->wr);
    } else if (auto* p = std::get_if<PostWrite>(&a)) {
      // One-sided writes arrive with the ImmCounter issue; nothing in this engine posts them yet.
      sim_complete(w_, conn, side,
                   CompletionEvent{p->path, p->wr.id, p->wr.opcode, WcStatus::LocQpOpErr, 0, std::nullopt});
    } else if (auto* p = std::get_if<ProbeRail>(&a)) {
      launch_probe(w_, conn, side, p->path.value, p->nonce);
    } else if (auto* m = std::get_if<ModifyQp>(&a)) {
      sim_modify_qp(w_, conn, side, m->path.value, m->target);
    } else if (std::holds_alternative<RegisterMr>(a)) {
      ++w_.counters().mr_registrations;
    } else if (auto* t = std::get_if<ArmTimer>(&a)) {
      const TimerKey key{conn, side, t->timer};
      me.timers[key] = t->deadline;
      me.deadlines.emplace(t->deadline, key);
    } else if (auto* t = std::get_if<CancelTimer>(&a)) {
      me.timers.erase(TimerKey{conn, side, t->timer});
    } else if (auto* s = std::get_if<SendControl>(&a)) {
      launch_control(w_, conn, side, s->channel, s->message);
    } else if (auto* r = std::get_if<CompleteRequest>(&a)) {
      const bool ok = r->outcome == RequestOutcome::Done;
      if (side == Side::Sender) {
        c.workload->on_send_complete(ok);
      } else {
        c.workload->on_recv_complete(now, r->request, ok, w_.memory());
      }
      w_.note_progress(conn);
    } else if (std::holds_alternative<ConnectionReady>(a)) {
      if (side == Side::Sender) c.workload->stats().ready_at = now;
    } else if (auto* f = std::get_if<ConnectionFailed>(&a)) {
      (void)f;
      c.workload->mark_failed(w_.now());
      w_.note_progress(conn);
    } else if (auto* t = std::get_if<Trace>(&a)) {
      w_.traces().push_back(TraceRecord{now, rank_, conn, side, t->note});
    }
  }
  if (observer != nullptr) observer->after_actions(w_, conn, side, actions);
}

bool RankDriver::fire_due_timers(Nanos now) {
  SimRank& me = w_.ranks()[rank_];
  bool fired = false;
  while (!me.deadlines.empty() && me.deadlines.begin()->first <= now) {
    const auto [deadline, key] = *me.deadlines.begin();
    me.deadlines.erase(me.deadlines.begin());
    auto it = me.timers.find(key);
    if (it == me.timers.end() || it->second != deadline) continue;  // cancelled
    me.timers.erase(it);
    fired = true;
    feed(key.conn, key.side, Event{TimerFired{key.timer}});
  }
  return fired;
}

void RankDriver::pump_users(Nanos now) {
  if (now < w_.scenario().workload.start) return;
  for (const auto& [conn, side] : w_.ranks()[rank_].sides) {
    SimConnection& c = w_.connections()[conn];
    HaConnection& e = c.engine(side);
    if (!e.comm_ready() || e.failed()) continue;
    if (side == Side::Sender) {
      for (const auto& s : c.workload->sender_ready_posts()) feed(conn, side, Event{s});
    } else {
      for (auto& r : c.workload->receiver_ready_posts(now)) feed(conn, side, Event{std::move(r)});
    }
  }
}

Nanos RankDriver::next_deadline(Nanos now) const {
  // Only future instants count: anything due now has just been handled, and waiting "until now"
  // would spin at the same simulated time.
  const SimRank& me = w_.ranks()[rank_];
  Nanos next = w_.scenario().time_limit;
  auto consider = [&](Nanos t) {
    if (t > now && t < next) next = t;
  };
  for (auto it = me.deadlines.upper_bound(now); it != me.deadlines.end(); ++it) {
    if (me.timers.count(it->second) != 0) {
      consider(it->first);
      break;
    }
  }
  if (!me.inbox.empty()) consider(me.inbox.top().at);
  consider(w_.scenario().workload.start);
  for (const auto& [conn, side] : me.sides) {
    if (side != Side::Receiver) continue;
    if (auto wake = w_.connections()[conn].workload->next_wake()) consider(*wake);
  }
  return std::max(next, now);
}

}  // namespace railcheck::sim
