// The failover world's steps: what can happen next (choices) and making it happen (apply).
#include <fmt/format.h>

#include "verify/failover_world.hpp"

namespace railcheck::verify {

using Kind = Choice::Kind;

bool FailoverWorld::data_deliverable(const ConnWorld& w, std::uint32_t p, std::size_t index) const {
  const Packet& pk = w.data[p][index];
  const QpModel& r = w.qp[kReceiver][p];
  if (r.state != QpState::Rtr && r.state != QpState::Rts) return true;  // dropped on arrival
  const bool fresh = model_.ordered ? pk.psn == r.expected_psn : r.landed_psn.count(pk.psn) == 0;
  if (model_.ordered && pk.psn > r.expected_psn) return true;  // out of sequence: dropped
  // A fresh packet needs a posted receive; without one the responder sends RNR NAKs and the
  // requester retries (rnr_retry 7: forever), so the packet simply waits.
  return !fresh || !r.recvs.empty();
}

std::optional<FailoverWorld::TimerRef> FailoverWorld::earliest_timer_of(std::uint8_t c) const {
  std::optional<TimerRef> best;
  auto consider = [&](TimerRef t) {
    if (!best || t.deadline < best->deadline) best = t;
  };
  const ConnWorld& w = conns_[c];
  for (std::int8_t e = 0; e < 2; ++e)
    for (const auto& [id, deadline] : w.timers[e]) consider({deadline, c, e, id});
  for (std::uint32_t p = 0; p < model_.paths; ++p)
    if (w.qp[kSender][p].retry_deadline) consider({*w.qp[kSender][p].retry_deadline, c, -1, p});
  return best;
}

// Within a connection, simultaneous timers fire in a fixed order (the sender's, the receiver's,
// then the HCAs' retry windows). Between the two connections the order must not depend on
// which connection is which, or the world would not be symmetric under swapping them (and the
// symmetry reduction would be unsound): the connection whose state hashes lower goes first.
// Two connections with equal hashes are in the same state, so either order gives the same
// outcome up to the swap. Both orders are equally arbitrary; neither is explored as a choice.
std::optional<FailoverWorld::TimerRef> FailoverWorld::earliest_timer() const {
  std::optional<TimerRef> best;
  for (std::uint8_t c = 0; c < conns_.size(); ++c) {
    const auto t = earliest_timer_of(c);
    if (!t) continue;
    if (!best || t->deadline < best->deadline) {
      best = t;
    } else if (t->deadline == best->deadline &&
               hash_conn(conns_[c], IdCounters::Omit) < hash_conn(conns_[best->conn], IdCounters::Omit)) {
      best = t;
    }
  }
  return best;
}

std::optional<Nanos> FailoverWorld::earliest_deadline() const {
  std::optional<Nanos> best;
  for (std::uint8_t c = 0; c < conns_.size(); ++c)
    if (const auto t = earliest_timer_of(c); t && (!best || t->deadline < *best)) best = t->deadline;
  return best;
}

bool FailoverWorld::network_pending() const {
  for (std::uint8_t c = 0; c < conns_.size(); ++c) {
    const ConnWorld& w = conns_[c];
    for (std::uint32_t p = 0; p < model_.paths; ++p) {
      for (std::size_t i = 0; i < w.data[p].size(); ++i) {
        if (data_deliverable(w, p, i)) return true;
        if (model_.ordered) break;
      }
      if (!w.acks[p].empty() || !w.recv_cq[p].empty()) return true;
      const QpModel& q = w.qp[kSender][p];
      if (q.lost_something && q.state == QpState::Rts && rail_up_[p] && !q.sends.empty()) return true;
    }
    for (const auto& side : w.control)
      for (const auto& ch : side)
        if (!ch.empty()) return true;
    if (model_.interleave_user_calls) {
      if (w.ready[kSender] && w.isends < model_.messages) return true;
      if (w.ready[kReceiver] && w.irecvs * model_.recv_group < model_.messages) return true;
    }
  }
  return false;
}

bool FailoverWorld::can_progress() const {
  if (network_pending()) return true;
  const auto t = earliest_deadline();
  return t && *t <= model_.horizon;
}

std::vector<Choice> FailoverWorld::choices() const {
  std::vector<Choice> out;
  if (work_finished()) return out;
  bool network = false;
  for (std::uint8_t c = 0; c < conns_.size(); ++c) {
    const ConnWorld& w = conns_[c];
    for (std::uint32_t p = 0; p < model_.paths; ++p) {
      const auto path = static_cast<std::uint8_t>(p);
      for (std::size_t i = 0; i < w.data[p].size(); ++i) {
        if (data_deliverable(w, p, i)) out.push_back({Kind::Data, c, path, 0, static_cast<std::uint8_t>(i)});
        if (model_.ordered) break;
      }
      if (!w.acks[p].empty()) out.push_back({Kind::Ack, c, path});
      if (!w.recv_cq[p].empty()) out.push_back({Kind::RecvCqe, c, path});
      const QpModel& q = w.qp[kSender][p];
      if (q.lost_something && q.state == QpState::Rts && rail_up_[p] && !q.sends.empty())
        out.push_back({Kind::Retransmit, c, path});
    }
    for (std::uint8_t to = 0; to < 2; ++to)
      for (std::uint32_t ch = 0; ch <= model_.paths; ++ch)
        if (!w.control[to][ch].empty()) out.push_back({Kind::Control, c, static_cast<std::uint8_t>(ch), to});
    if (model_.interleave_user_calls) {
      if (w.ready[kSender] && w.isends < model_.messages) out.push_back({Kind::Isend, c});
      if (w.ready[kReceiver] && w.irecvs * model_.recv_group < model_.messages) out.push_back({Kind::Irecv, c});
    }
  }
  network = !out.empty();
  if (const auto t = earliest_deadline(); t && *t <= model_.horizon && (!network || races_ < model_.timer_races))
    out.push_back({Kind::Timer});
  if (!model_.faults_during_handshake && !handshake_done()) return reduce(std::move(out));
  for (std::uint32_t p = 0; p < model_.paths; ++p) {
    const auto path = static_cast<std::uint8_t>(p);
    if (kills_ < model_.link_failures && rail_up_[p]) out.push_back({Kind::KillLink, 0, path});
    if (repairs_ < model_.link_repairs && !rail_up_[p]) out.push_back({Kind::RepairLink, 0, path});
  }
  if (losses_ < model_.losses) {
    for (std::uint8_t c = 0; c < conns_.size(); ++c) {
      const ConnWorld& w = conns_[c];
      for (std::uint32_t p = 0; p < model_.paths; ++p) {
        const auto path = static_cast<std::uint8_t>(p);
        if (!w.data[p].empty()) out.push_back({Kind::LoseData, c, path});
        if (!w.acks[p].empty()) out.push_back({Kind::LoseAck, c, path});
        for (std::uint8_t to = 0; to < 2; ++to)
          if (!w.control[to][p].empty()) out.push_back({Kind::LoseControl, c, path, to});
      }
    }
  }
  return reduce(std::move(out));
}

// Partial-order reduction (an ample set): steps local to one connection (deliveries, polls,
// user calls) touch only that connection's state and read the rails without changing them, so
// local steps of different connections commute. When no global step (timer, rail death or
// repair, loss) is possible, every interleaving of the connections' local steps leads to the
// same outcomes as running the first connection's local steps first; exploring only those
// keeps every per-connection behaviour (all invariants are per connection) and turns the
// product of the connections' tails into their sum. With a global step enabled nothing is
// pruned: a rail death does not commute with a delivery on that rail.
std::vector<Choice> FailoverWorld::reduce(std::vector<Choice> all) const {
  if (conns_.size() < 2) return all;
  for (const auto& c : all)
    if (c.kind == Kind::Timer || c.kind == Kind::KillLink || c.kind == Kind::RepairLink ||
        c.kind == Kind::LoseData || c.kind == Kind::LoseAck || c.kind == Kind::LoseControl)
      return all;
  if (all.empty()) return all;
  const std::uint8_t first = all.front().conn;
  std::erase_if(all, [&](const Choice& c) { return c.conn != first; });
  return all;
}

void FailoverWorld::apply(const Choice& c) {
  notes_.clear();
  error_cqe_in_step_ = false;
  if (narrate_) note("t={} {}", format_duration(now_), to_string(c));
  ConnWorld* w = c.conn < conns_.size() ? &conns_[c.conn] : nullptr;
  // A timer may belong to either connection and a rail carries both: those steps void every
  // cached hash. Every other step changes its own connection only (feed() also voids the
  // connection it feeds, which covers user_calls()).
  const bool one_conn = w != nullptr && c.kind != Kind::Timer && c.kind != Kind::KillLink &&
                        c.kind != Kind::RepairLink;
  if (one_conn) {
    touch(c.conn);
  } else {
    for (std::uint8_t i = 0; i < conns_.size(); ++i) touch(i);
  }
  switch (c.kind) {
    case Kind::Data: deliver_data(c.conn, c.path, c.index); break;
    case Kind::Ack: deliver_ack(c.conn, c.path); break;
    case Kind::RecvCqe: {
      const CompletionEvent e = w->recv_cq[c.path].front();
      w->recv_cq[c.path].pop_front();
      note("  c{} receiver polls {} for wr {}", c.conn, to_string(e.status), e.wr.value);
      feed(c.conn, kReceiver, e);
      break;
    }
    case Kind::Control: deliver_control(c.conn, static_cast<End>(c.to), c.path); break;
    case Kind::Timer:
      if (network_pending()) ++races_;
      fire_timer();
      break;
    case Kind::KillLink: kill_rail(c.path); break;
    case Kind::RepairLink: repair_rail(c.path); break;
    case Kind::LoseData:
      w->data[c.path].pop_front();
      w->qp[kSender][c.path].lost_something = true;
      rail_hit_[c.path] = true;
      ++losses_;
      break;
    case Kind::LoseAck:
      w->acks[c.path].pop_front();
      w->qp[kSender][c.path].lost_something = true;
      rail_hit_[c.path] = true;
      ++losses_;
      break;
    case Kind::LoseControl:
      w->control[c.to][c.path].pop_front();
      rail_hit_[c.path] = true;
      ++losses_;
      break;
    case Kind::Retransmit: retransmit(c.conn, c.path); break;
    case Kind::Isend: issue_isend(c.conn); break;
    case Kind::Irecv: issue_irecv(c.conn); break;
  }
  user_calls();
}

void FailoverWorld::deliver_data(std::uint8_t conn, std::uint32_t p, std::size_t index) {
  ConnWorld& w = conns_[conn];
  const Packet pk = w.data[p][index];
  w.data[p].erase(w.data[p].begin() + static_cast<std::ptrdiff_t>(index));
  QpModel& r = w.qp[kReceiver][p];
  const std::uint64_t msg = pk.wr.imm.value_or(0);
  if (r.state != QpState::Rtr && r.state != QpState::Rts) {
    // A responder that is not RTR/RTS never ACKs: the requester retries into silence and
    // reports RETRY_EXC_ERR when its window is over, exactly as if the rail had died.
    note("  c{} message {} arrives at a receiver QP in {}: dropped", conn, msg, to_string(r.state));
    QpModel& q = w.qp[kSender][p];
    if (q.state == QpState::Rts && !q.sends.empty() && !q.retry_deadline)
      q.retry_deadline = std::max(now_, q.sends.front().posted + window_);
    return;
  }
  if (model_.ordered && pk.psn > r.expected_psn) {
    note("  c{} PSN {} out of sequence (expected {}): dropped", conn, pk.psn, r.expected_psn);
    return;
  }
  const bool duplicate = model_.ordered ? pk.psn < r.expected_psn : r.landed_psn.count(pk.psn) != 0;
  if (duplicate) {
    // The responder recognises a retransmission it already executed and only ACKs it again.
    note("  c{} duplicate PSN {}: ACKed again, not delivered", conn, pk.psn);
    w.acks[p].push_back(model_.ordered ? r.expected_psn - 1 : pk.psn);
    return;
  }
  const WorkRequest recv = r.recvs.front();
  r.recvs.pop_front();
  if (model_.ordered) {
    ++r.expected_psn;
  } else {
    r.landed_psn.insert(pk.psn);
  }
  const std::uint64_t buffer = recv.sges.empty() ? 0 : recv.sges[0].addr;
  w.memory[buffer] = pk.wr.sges.empty() ? ~0ULL : message_sent_from(pk.wr.sges[0].addr);
  note("  c{} message {} lands in receive wr {}", conn, msg, recv.id.value);
  w.acks[p].push_back(pk.psn);
  const CompletionEvent cqe{PathIndex{p}, recv.id, WrOpcode::Recv, WcStatus::Success,
                            static_cast<std::uint32_t>(pk.wr.total_bytes()), pk.wr.imm};
  if (model_.delay_recv_completions) {
    w.recv_cq[p].push_back(cqe);
  } else {
    feed(conn, kReceiver, cqe);
  }
}

void FailoverWorld::deliver_ack(std::uint8_t conn, std::uint32_t p) {
  ConnWorld& w = conns_[conn];
  const std::uint32_t acked = w.acks[p].front();
  w.acks[p].pop_front();
  QpModel& q = w.qp[kSender][p];
  if (q.state != QpState::Rts) return;  // a late ACK for a QP already in ERR
  // Cumulative on RC: everything up to `acked` completes, in order. Unordered: just that one.
  while (!q.sends.empty()) {
    auto it = q.sends.begin();
    if (!model_.ordered) {
      while (it != q.sends.end() && it->psn != acked) ++it;
      if (it == q.sends.end()) break;
    } else if (it->psn > acked) {
      break;
    }
    const WorkRequest wr = it->wr;
    q.sends.erase(it);
    note("  c{} ACK completes send wr {}", conn, wr.id.value);
    feed(conn, kSender,
         CompletionEvent{PathIndex{p}, wr.id, WrOpcode::Send, WcStatus::Success,
                         static_cast<std::uint32_t>(wr.total_bytes()), std::nullopt});
    if (!model_.ordered) break;
  }
  if (q.sends.empty()) {
    q.retry_deadline.reset();
    q.lost_something = false;
  }
}

void FailoverWorld::deliver_control(std::uint8_t conn, End to, std::uint32_t channel) {
  ConnWorld& w = conns_[conn];
  const ControlMessage m = w.control[to][channel].front();
  w.control[to][channel].pop_front();
  const ControlChannel ch = channel == model_.paths ? ControlChannel::oob() : ControlChannel::on(PathIndex{channel});
  feed(conn, to, ControlReceived{ch, m});
}

void FailoverWorld::fire_timer() {
  const auto t = earliest_timer();
  if (!t) return;
  if (t->deadline > now_) now_ = t->deadline;
  if (t->end < 0) {
    retry_exceeded(t->conn, static_cast<std::uint32_t>(t->id));
    return;
  }
  conns_[t->conn].timers[t->end].erase(t->id);
  note("  c{} {} timer {} fires", t->conn, t->end == kSender ? "sender" : "receiver", t->id);
  feed(t->conn, static_cast<End>(t->end), TimerFired{TimerId{t->id}});
}

void FailoverWorld::retry_exceeded(std::uint8_t conn, std::uint32_t p) {
  ConnWorld& w = conns_[conn];
  QpModel& q = w.qp[kSender][p];
  q.retry_deadline.reset();
  if (q.state != QpState::Rts || q.sends.empty()) return;
  std::vector<WorkRequest> lost;
  for (const auto& s : q.sends) lost.push_back(s.wr);
  q.sends.clear();
  q.state = QpState::Err;
  note("  c{} HCA retry window over on p{}: RETRY_EXC_ERR", conn, p);
  error_cqe_in_step_ = true;
  for (std::size_t i = 0; i < lost.size(); ++i)
    feed(conn, kSender,
         CompletionEvent{PathIndex{p}, lost[i].id, WrOpcode::Send, i == 0 ? WcStatus::RetryExcErr : WcStatus::WrFlushErr,
                         0, std::nullopt});
}

void FailoverWorld::kill_rail(std::uint32_t p) {
  rail_up_[p] = false;
  rail_hit_[p] = true;
  ++kills_;
  for (auto& w : conns_) {
    w.data[p].clear();
    w.acks[p].clear();
    w.control[kSender][p].clear();
    w.control[kReceiver][p].clear();
    QpModel& q = w.qp[kSender][p];
    if (q.state == QpState::Rts && !q.sends.empty() && !q.retry_deadline)
      q.retry_deadline = std::max(now_, q.sends.front().posted + window_);
  }
}

void FailoverWorld::repair_rail(std::uint32_t p) {
  rail_up_[p] = true;
  ++repairs_;
  for (std::uint8_t c = 0; c < conns_.size(); ++c) {
    QpModel& q = conns_[c].qp[kSender][p];
    if (q.state != QpState::Rts || !q.retry_deadline) continue;
    // The link is back before the HCA gave up: its next retransmission gets through.
    q.retry_deadline.reset();
    retransmit(c, p);
  }
}

void FailoverWorld::retransmit(std::uint8_t conn, std::uint32_t p) {
  ConnWorld& w = conns_[conn];
  QpModel& q = w.qp[kSender][p];
  // Go-back-N: everything from the oldest unacknowledged packet is sent again, in order.
  w.data[p].clear();
  for (const auto& s : q.sends) w.data[p].push_back(Packet{s.psn, s.wr});
  q.lost_something = false;
}

}  // namespace railcheck::verify
