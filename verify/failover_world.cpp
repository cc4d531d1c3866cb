// The failover world: construction, executing engine actions, user calls, fingerprints.
// Steps (deliveries, timers, faults) are in failover_world_steps.cpp.
#include "verify/failover_world.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/rc_timeouts.hpp"

namespace railcheck::verify {
namespace {

constexpr MrId kUserMr{1};

HaConnection make_engine(const FailoverModel& m, End end) {
  HaConnectionConfig c{end == kSender ? ConnRole::Sender : ConnRole::Receiver, {}, m.tunables};
  // The detector runs only where the model answers its probes (`probes`): otherwise it would
  // hear nothing and call every rail dead. verify/liveness_world.cpp checks its own promises;
  // here its verdicts meet real failures and the exactly-once invariants.
  c.tunables.liveness = m.probes;
  for (std::uint32_t p = 0; p < m.paths; ++p) {
    QpEndpoint ep;
    ep.qpn = 100u + 10u * end + p;
    ep.lid = static_cast<std::uint16_t>(p + 1);
    ep.psn = 0;
    c.paths.push_back(PathConfig{PdId{p}, ep});
  }
  return HaConnection(c);
}

}  // namespace

FailoverWorld::FailoverWorld(const FailoverModel& model)
    : model_(model),
      window_(hardware_retry_window(model.tunables.qp)),
      rail_up_(model.paths, true),
      rail_hit_(model.paths, false) {
  const std::uint8_t n = model.bidirectional ? 2 : 1;
  for (std::uint8_t c = 0; c < n; ++c) {
    ConnWorld w({make_engine(model, kSender), make_engine(model, kReceiver)});
    for (auto& q : w.qp) q.resize(model.paths);
    w.data.resize(model.paths);
    w.acks.resize(model.paths);
    w.recv_cq.resize(model.paths);
    for (auto& ch : w.control) ch.resize(model.paths + 1);
    conns_.push_back(std::move(w));
  }
  // Phase 1 of every connection starts at once: listen, hand the handle over (the bootstrap),
  // connect. Everything after that is a choice.
  for (std::uint8_t c = 0; c < n; ++c) {
    Actions acts;
    const ConnectionHandle h = conns_[c].engine[kReceiver].listen(acts);
    execute(c, kReceiver, acts);
    acts.clear();
    const auto bytes = encode_handle(h);
    (void)conns_[c].engine[kSender].connect(now_, bytes, acts);
    execute(c, kSender, acts);
  }
  user_calls();
}

void FailoverWorld::feed(std::uint8_t conn, End end, const Event& ev) {
  touch(conn);
  Actions acts;
  conns_[conn].engine[end].handle(now_, ev, acts);
  execute(conn, end, acts);
}

void FailoverWorld::execute(std::uint8_t conn, End end, Actions& acts) {
  apply_mutation(model_.mutation, acts);
  for (const Action& a : acts) execute_one(conn, end, a);
}

void FailoverWorld::execute_one(std::uint8_t conn, End end, const Action& a) {
  ConnWorld& w = conns_[conn];
  const auto side = end == kSender ? "sender" : "receiver";
  auto check_mrs = [&](PathIndex p, const WorkRequest& wr) {
    for (const auto& s : wr.sges)
      if (w.registered[end].count({p.value, s.mr.value}) == 0) w.mr_faults.push_back({end, p, s.mr});
  };
  if (const auto* s = std::get_if<PostSend>(&a)) {
    check_mrs(s->path, s->wr);
    post_send(w, conn, s->path, s->wr);
  } else if (const auto* r = std::get_if<PostRecv>(&a)) {
    check_mrs(r->path, r->wr);
    QpModel& q = w.qp[end][r->path.value];
    if (q.state == QpState::Err) {
      const CompletionEvent flush{r->path, r->wr.id, WrOpcode::Recv, WcStatus::WrFlushErr, 0, std::nullopt};
      if (model_.delay_recv_completions && end == kReceiver) {
        w.recv_cq[r->path.value].push_back(flush);
      } else {
        feed(conn, end, flush);
      }
    } else {
      q.recvs.push_back(r->wr);
    }
  } else if (const auto* pr = std::get_if<ProbeRail>(&a)) {
    // Answered by the peer's NIC at once while the rail lives; a dead rail loses it.
    if (rail_up_[pr->path.value]) feed(conn, end, ProbeAnswered{pr->path, pr->nonce});
  } else if (const auto* m = std::get_if<ModifyQp>(&a)) {
    move_qp(w, conn, end, *m);
  } else if (const auto* g = std::get_if<RegisterMr>(&a)) {
    w.registered[end].insert({g->pd.value, g->mr.value});
  } else if (const auto* t = std::get_if<ArmTimer>(&a)) {
    w.timers[end][t->timer.value] = t->deadline;
  } else if (const auto* t = std::get_if<CancelTimer>(&a)) {
    w.timers[end].erase(t->timer.value);
  } else if (const auto* s = std::get_if<SendControl>(&a)) {
    const std::uint32_t ch = s->channel.out_of_band ? model_.paths : s->channel.path.value;
    const bool carried = s->channel.out_of_band || rail_up_[ch];
    if (narrate_) {
      note("  c{} {} sends {} on {}{}", conn, side, control_name(s->message),
           s->channel.out_of_band ? "oob" : fmt::format("p{}", ch), carried ? "" : " (rail down: lost)");
    }
    if (carried) w.control[end == kSender ? kReceiver : kSender][ch].push_back(s->message);
  } else if (const auto* r = std::get_if<CompleteRequest>(&a)) {
    if (!w.completed[end].insert(r->request.value).second) ++w.double_completions;
    if (r->outcome == RequestOutcome::Failed) {
      ++w.failed_requests[end];
      note("  c{} {} request {} failed: {}", conn, side, r->request.value,
           r->error ? r->error->what : "?");
    } else if (end == kReceiver) {
      for (const auto addr : w.recv_buffers[r->request.value]) {
        auto it = w.memory.find(addr);
        w.delivered.push_back(it == w.memory.end() ? ~0ULL : it->second);
      }
      note("  c{} receiver request {} done: buffers hold {}", conn, r->request.value,
           fmt::join(w.delivered, ","));
    } else {
      note("  c{} sender request {} done", conn, r->request.value);
    }
  } else if (std::holds_alternative<ConnectionReady>(a)) {
    w.ready[end] = true;
    w.ready_records.push_back({end, w.qp[end][0].state});
    note("  c{} {} hands out the comm (primary QP {})", conn, side, to_string(w.qp[end][0].state));
  } else if (std::holds_alternative<ConnectionFailed>(a)) {
    w.failed[end] = true;
  } else if (const auto* t = std::get_if<Trace>(&a)) {
    note("  c{} {}: {} p{} {} {}", conn, side, to_string(t->note.kind), t->note.path.value, t->note.count,
         t->note.detail);
    const bool timed_out = t->note.detail.rfind(to_string(FailoverTrigger::SoftRto), 0) == 0 ||
                           t->note.detail.rfind(to_string(FailoverTrigger::ControlTimeout), 0) == 0;
    if (t->note.kind == TraceKind::FailoverStarted && end == kSender && timed_out) {
      // A delay long enough to make a soft RTO or a control timeout fire is a fault of that
      // path, like a loss: count it for the survival invariant (a path the engine gave up on
      // after a timeout is no longer "clean").
      if (t->note.path.value < rail_hit_.size()) rail_hit_[t->note.path.value] = true;
    }
    if (t->note.kind == TraceKind::FailoverStarted && end == kSender) {
      FailoverRecord f{now_, t->note.detail, std::nullopt, error_cqe_in_step_};
      for (const auto& q : w.qp[kSender])
        for (const auto& s : q.sends)
          if (!f.oldest_age || now_ - s.posted > *f.oldest_age) f.oldest_age = now_ - s.posted;
      w.failovers.push_back(std::move(f));
    }
  }
}

void FailoverWorld::post_send(ConnWorld& w, std::uint8_t conn, PathIndex p, const WorkRequest& wr) {
  QpModel& q = w.qp[kSender][p.value];
  if (q.state != QpState::Rts) {
    feed(conn, kSender, CompletionEvent{p, wr.id, WrOpcode::Send, WcStatus::WrFlushErr, 0, std::nullopt});
    return;
  }
  const std::uint32_t psn = q.next_psn++;
  q.sends.push_back({psn, wr, now_});
  if (rail_up_[p.value]) {
    w.data[p.value].push_back(Packet{psn, wr});
  } else if (!q.retry_deadline) {
    q.retry_deadline = std::max(now_, q.sends.front().posted + window_);
  }
}

void FailoverWorld::move_qp(ConnWorld& w, std::uint8_t conn, End end, const ModifyQp& m) {
  QpModel& q = w.qp[end][m.path.value];
  q.state = m.target;
  if (m.target == QpState::Reset) {
    // A QP reset discards its state; packets of the old incarnation still in the network are
    // dropped (a real responder rejects them as out of its new PSN window).
    q = QpModel{};
    w.data[m.path.value].clear();
    w.acks[m.path.value].clear();
    return;
  }
  if (m.target != QpState::Err) return;
  // ERR flushes every outstanding WR, in order, after anything already completed.
  std::vector<CompletionEvent> flushed;
  for (const auto& s : q.sends)
    flushed.push_back({m.path, s.wr.id, WrOpcode::Send, WcStatus::WrFlushErr, 0, std::nullopt});
  for (const auto& r : q.recvs)
    flushed.push_back({m.path, r.id, WrOpcode::Recv, WcStatus::WrFlushErr, 0, std::nullopt});
  q.sends.clear();
  q.recvs.clear();
  q.retry_deadline.reset();
  for (const auto& f : flushed) {
    if (end == kReceiver && model_.delay_recv_completions) {
      w.recv_cq[m.path.value].push_back(f);
    } else {
      feed(conn, end, f);
    }
  }
}

void FailoverWorld::user_calls() {
  for (std::uint8_t c = 0; c < conns_.size(); ++c) {
    ConnWorld& w = conns_[c];
    for (const End e : {kSender, kReceiver}) {
      if (!w.ready[e] || w.registered[e].count({0, kUserMr.value}) != 0) continue;
      const std::uint64_t base = e == kSender ? send_addr(0) : recv_addr(0);
      feed(c, e, UserRegMr{kUserMr, base, kRegion});
    }
    if (model_.interleave_user_calls) continue;
    while (w.ready[kSender] && w.isends < model_.messages) issue_isend(c);
    while (w.ready[kReceiver] && w.irecvs * model_.recv_group < model_.messages) issue_irecv(c);
  }
}

void FailoverWorld::issue_isend(std::uint8_t conn) {
  ConnWorld& w = conns_[conn];
  const std::uint64_t msg = w.isends++;
  note("  c{} user: isend {}", conn, msg);
  feed(conn, kSender, UserIsend{RequestId{msg}, Sge{send_addr(msg), 64, kUserMr}, msg});
}

void FailoverWorld::issue_irecv(std::uint8_t conn) {
  ConnWorld& w = conns_[conn];
  const std::uint64_t first = static_cast<std::uint64_t>(w.irecvs++) * model_.recv_group;
  UserIrecv r{RequestId{first}, {}, {}};
  for (std::uint32_t i = 0; i < model_.recv_group; ++i) {
    r.buffers.push_back(Sge{recv_addr(first + i), 64, kUserMr});
    r.tags.push_back(first + i);
    w.recv_buffers[first].push_back(recv_addr(first + i));
  }
  note("  c{} user: irecv {} (x{})", conn, first, model_.recv_group);
  feed(conn, kReceiver, r);
}

bool FailoverWorld::work_finished() const {
  for (const auto& w : conns_) {
    // A failed end has told its caller; NCCL then aborts the communicator, which releases the
    // other end's pending requests (the receiver cannot time out on its own).
    if (w.failed[kSender] || w.failed[kReceiver]) continue;
    if (w.completed[kSender].size() < model_.messages) return false;
    if (w.completed[kReceiver].size() * model_.recv_group < model_.messages) return false;
  }
  return true;
}

std::uint32_t FailoverWorld::paths_hit() const {
  std::uint32_t n = 0;
  for (const bool h : rail_hit_) n += h ? 1 : 0;
  return n;
}

bool FailoverWorld::handshake_done() const {
  for (const auto& w : conns_)
    for (const End e : {kSender, kReceiver}) {
      if (!w.ready[e]) return false;
      for (const auto& q : w.qp[e])
        if (q.state != QpState::Rts) return false;
    }
  return true;
}

// The world's symmetries (docs/verify.md, "Symmetry reduction"): each connection is hashed on
// its own, without its number; with symmetry on, the connections' hashes go in sorted (the
// state and its mirror, the connections swapped, get one fingerprint) and the engines leave
// out their id counters (states equal up to renaming fresh ids get one fingerprint).
std::uint64_t FailoverWorld::fingerprint() const {
  StateHasher h;
  h.add(now_);
  h.add(kills_);
  h.add(repairs_);
  h.add(losses_);
  h.add(races_);
  for (std::uint32_t p = 0; p < model_.paths; ++p) {
    h.add(static_cast<bool>(rail_up_[p]));
    h.add(static_cast<bool>(rail_hit_[p]));
  }
  if (conns_.size() == 2 && symmetry_) {
    const auto a = hash_conn(conns_[0], IdCounters::Omit);
    const auto b = hash_conn(conns_[1], IdCounters::Omit);
    h.add(std::min(a, b));
    h.add(std::max(a, b));
  } else {
    for (const auto& w : conns_) h.add(hash_conn(w, symmetry_ ? IdCounters::Omit : IdCounters::Hash));
  }
  return h.value();
}

std::uint64_t FailoverWorld::hash_conn(const ConnWorld& w, IdCounters counters) const {
  auto& cached = w.hash_cache[counters == IdCounters::Hash ? 0 : 1];
  if (!cached) cached = hash_conn_fresh(w, counters);
  return *cached;
}

std::uint64_t FailoverWorld::hash_conn_fresh(const ConnWorld& w, IdCounters counters) const {
  StateHasher h;
  auto hash_wr_id = [&](const WorkRequest& wr) {
    h.add(wr.id);
    h.add(wr.sges.empty() ? 0 : wr.sges[0].addr);
    h.add(wr.imm);
  };
  for (const auto& e : w.engine) e.hash_state(h, counters);
  for (const auto& side : w.qp)
    for (const auto& q : side) {
      h.add(q.state);
      h.add(q.sends.size());
      for (const auto& s : q.sends) {
        h.add(s.psn);
        hash_wr_id(s.wr);
        h.add(s.posted);
      }
      h.add(q.recvs.size());
      for (const auto& r : q.recvs) hash_wr_id(r);
      h.add(q.next_psn);
      h.add(q.expected_psn);
      h.add(q.landed_psn.size());
      for (const auto psn : q.landed_psn) h.add(psn);
      h.add(q.retry_deadline);
      h.add(q.lost_something);
    }
  for (std::uint32_t p = 0; p < model_.paths; ++p) {
    h.add(w.data[p].size());
    for (const auto& pk : w.data[p]) {
      h.add(pk.psn);
      hash_wr_id(pk.wr);
    }
    h.add(w.acks[p].size());
    for (const auto a : w.acks[p]) h.add(a);
    h.add(w.recv_cq[p].size());
    for (const auto& c : w.recv_cq[p]) {
      h.add(c.wr);
      h.add(c.status);
    }
  }
  for (const auto& side : w.control)
    for (const auto& ch : side) {
      h.add(ch.size());
      for (const auto& m : ch) {
        h.add(m.index());
        std::visit(
            [&](const auto& x) {
              using T = std::decay_t<decltype(x)>;
              if constexpr (requires { x.epoch; }) h.add(x.epoch);
              if constexpr (requires { x.nonce; }) h.add(x.nonce);
              if constexpr (std::is_same_v<T, ResyncAck>) h.add(x.delivered);
              if constexpr (std::is_same_v<T, ProbeRequest>)
                for (auto s : x.seqs) h.add(s);
              if constexpr (std::is_same_v<T, ProbeReply>)
                for (auto s : x.delivered) h.add(s);
              if constexpr (requires { x.next; }) h.add(x.next);
              if constexpr (std::is_same_v<T, PathRevive>) {
                h.add(x.path);
                h.add(x.ack);
              }
              if constexpr (std::is_same_v<T, StandbyParams>) h.add(x.reply);
            },
            m);
      }
    }
  for (const auto& side : w.timers) {
    h.add(side.size());
    for (const auto& [id, d] : side) {
      h.add(id);
      h.add(d);
    }
  }
  for (const auto& side : w.registered) h.add(side.size());
  h.add(w.isends);
  h.add(w.irecvs);
  h.add(w.delivered.size());
  for (const auto d : w.delivered) h.add(d);
  h.add(w.memory.size());
  for (const auto& [addr, msg] : w.memory) {
    h.add(addr);
    h.add(msg);
  }
  for (const auto& side : w.completed) h.add(side.size());
  h.add(w.failed_requests[0]);
  h.add(w.failed_requests[1]);
  h.add(w.ready[0]);
  h.add(w.ready[1]);
  h.add(w.failed[0]);
  h.add(w.failed[1]);
  return h.value();
}

}  // namespace railcheck::verify
