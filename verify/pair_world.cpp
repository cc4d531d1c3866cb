#include "verify/pair_world.hpp"

#include "engine/core/rc_timeouts.hpp"

namespace railcheck::verify {
namespace {

QpEndpoint endpoint(std::uint32_t qpn) {
  QpEndpoint ep;
  ep.qpn = qpn;
  ep.lid = static_cast<std::uint16_t>(qpn);
  ep.psn = qpn * 7;
  return ep;
}

HaConnectionConfig config(ConnRole role, const HaTunables& t, std::uint32_t paths) {
  HaConnectionConfig c{role, {}, t};
  for (std::uint32_t p = 0; p < paths; ++p)
    c.paths.push_back(PathConfig{PdId{p}, endpoint((role == ConnRole::Sender ? 100 : 200) + p)});
  return c;
}

constexpr MrId kSendMr{1};
constexpr MrId kRecvMr{2};

}  // namespace

PairWorld::PairWorld(const HaTunables& t, std::uint32_t paths)
    : sender_(config(ConnRole::Sender, t, paths)),
      receiver_(config(ConnRole::Receiver, t, paths)),
      sender_qps_(paths),
      receiver_qps_(paths),
      path_up_(paths, true),
      window_(hardware_retry_window(t.qp)) {}

void PairWorld::handshake() {
  Actions acts;
  const ConnectionHandle h = receiver_.listen(acts);
  execute(PairEnd::Receiver, acts);
  const auto bytes = encode_handle(h);
  acts.clear();
  (void)sender_.connect(now_, bytes, acts);
  execute(PairEnd::Sender, acts);
  feed(PairEnd::Sender, UserRegMr{kSendMr, send_addr(0), 1 << 20});
  feed(PairEnd::Receiver, UserRegMr{kRecvMr, recv_addr(0), 1 << 20});
  deliver_all();
}

void PairWorld::isend(std::uint64_t msg) {
  feed(PairEnd::Sender, UserIsend{RequestId{msg}, Sge{send_addr(msg), 4096, kSendMr}, msg});
}

void PairWorld::irecv(std::uint64_t first_msg, std::uint32_t group) {
  UserIrecv r{RequestId{first_msg}, {}, {}};
  for (std::uint32_t i = 0; i < group; ++i) {
    r.buffers.push_back(Sge{recv_addr(first_msg + i), 4096, kRecvMr});
    r.tags.push_back(first_msg + i);
    recv_requests_[first_msg].push_back(recv_addr(first_msg + i));
  }
  feed(PairEnd::Receiver, r);
}

void PairWorld::feed(PairEnd e, const Event& ev) {
  Actions acts;
  engine(e).handle(now_, ev, acts);
  execute(e, acts);
}

void PairWorld::execute(PairEnd e, Actions& acts) {
  Actions& log = e == PairEnd::Sender ? sender_log_ : receiver_log_;
  const PairEnd peer = e == PairEnd::Sender ? PairEnd::Receiver : PairEnd::Sender;
  for (const Action& a : acts) {
    log.push_back(a);
    if (const auto* p = std::get_if<PostSend>(&a)) {
      QpSim& q = qps(e)[p->path.value];
      if (q.state != QpState::Rts) {
        feed(e, CompletionEvent{p->path, p->wr.id, WrOpcode::Send, WcStatus::WrFlushErr, 0, std::nullopt});
        continue;
      }
      q.outstanding.push_back(p->wr);
      if (path_up_[p->path.value]) in_flight_.push_back(InFlight{InFlight::Kind::Data, peer, p->path.value, p->wr});
    } else if (const auto* p = std::get_if<PostRecv>(&a)) {
      QpSim& q = qps(e)[p->path.value];
      if (q.state == QpState::Err) {
        feed(e, CompletionEvent{p->path, p->wr.id, WrOpcode::Recv, WcStatus::WrFlushErr, 0, std::nullopt});
        continue;
      }
      q.recvs.push_back(p->wr);
    } else if (const auto* m = std::get_if<ModifyQp>(&a)) {
      QpSim& q = qps(e)[m->path.value];
      q.state = m->target;
      if (m->target == QpState::Err) {
        std::vector<CompletionEvent> flushed;
        for (const auto& wr : q.outstanding)
          flushed.push_back({m->path, wr.id, WrOpcode::Send, WcStatus::WrFlushErr, 0, std::nullopt});
        for (const auto& wr : q.recvs)
          flushed.push_back({m->path, wr.id, WrOpcode::Recv, WcStatus::WrFlushErr, 0, std::nullopt});
        q.outstanding.clear();
        q.recvs.clear();
        for (const auto& f : flushed) feed(e, f);
      } else if (m->target == QpState::Reset) {
        q = QpSim{};
      }
    } else if (const auto* t = std::get_if<ArmTimer>(&a)) {
      timers_[{static_cast<int>(e), t->timer.value}] = t->deadline;
    } else if (const auto* t = std::get_if<CancelTimer>(&a)) {
      timers_.erase({static_cast<int>(e), t->timer.value});
    } else if (const auto* s = std::get_if<SendControl>(&a)) {
      if (s->channel.out_of_band || path_up_[s->channel.path.value])
        in_flight_.push_back(
            InFlight{InFlight::Kind::Control, peer, s->channel.path.value, {}, s->channel, s->message});
    } else if (const auto* r = std::get_if<CompleteRequest>(&a)) {
      const bool ok = r->outcome == RequestOutcome::Done;
      if (e == PairEnd::Sender) {
        (ok ? sends_completed_ : sends_failed_)++;
      } else if (!ok) {
        ++recvs_failed_;
      } else {
        for (const auto addr : recv_requests_[r->request.value]) {
          auto it = memory_.find(addr);
          delivered_.push_back(it == memory_.end() ? ~0ULL : (it->second - send_addr(0)) / 64);
        }
      }
    }
  }
}

bool PairWorld::deliver(std::size_t i) {
  InFlight f = in_flight_[i];
  if (f.kind == InFlight::Kind::Control) {
    in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
    feed(f.to, ControlReceived{f.channel, f.message});
    return true;
  }
  if (f.kind == InFlight::Kind::Ack) {
    in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
    QpSim& q = sender_qps_[f.path];
    for (auto it = q.outstanding.begin(); it != q.outstanding.end(); ++it) {
      if (it->id == f.wr.id) {
        q.outstanding.erase(it);
        feed(PairEnd::Sender, CompletionEvent{PathIndex{f.path}, f.wr.id, WrOpcode::Send, WcStatus::Success,
                                              static_cast<std::uint32_t>(f.wr.total_bytes()), std::nullopt});
        break;
      }
    }
    return true;
  }
  QpSim& r = receiver_qps_[f.path];
  if (r.state != QpState::Rtr && r.state != QpState::Rts) {
    in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));  // dropped by the responder
    return true;
  }
  if (r.recvs.empty()) return false;  // RNR: stays in the network until a receive is posted
  in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
  WorkRequest recv = r.recvs.front();
  r.recvs.pop_front();
  ++r.landed;
  memory_[recv.sges[0].addr] = f.wr.sges[0].addr;
  in_flight_.push_back(InFlight{InFlight::Kind::Ack, PairEnd::Sender, f.path, f.wr});
  feed(PairEnd::Receiver, CompletionEvent{PathIndex{f.path}, recv.id, WrOpcode::Recv, WcStatus::Success,
                                          static_cast<std::uint32_t>(f.wr.total_bytes()), f.wr.imm});
  return true;
}

bool PairWorld::deliver_next() {
  for (std::size_t i = 0; i < in_flight_.size(); ++i) {
    // Per-path FIFO for data: only the oldest data packet of a path may land.
    if (in_flight_[i].kind == InFlight::Kind::Data) {
      bool older = false;
      for (std::size_t j = 0; j < i; ++j)
        older = older || (in_flight_[j].kind == InFlight::Kind::Data && in_flight_[j].path == in_flight_[i].path);
      if (older) continue;
    }
    if (deliver(i)) return true;
  }
  return false;
}

void PairWorld::deliver_all() {
  while (deliver_next()) {
  }
}

bool PairWorld::land_data_drop_ack(std::uint32_t path) {
  for (std::size_t i = 0; i < in_flight_.size(); ++i) {
    if (in_flight_[i].kind != InFlight::Kind::Data || in_flight_[i].path != path) continue;
    if (!deliver(i)) return false;
    // deliver() queued the ACK last: lose it.
    in_flight_.pop_back();
    return true;
  }
  return false;
}

void PairWorld::kill_path(std::uint32_t path) {
  path_up_[path] = false;
  std::erase_if(in_flight_, [&](const InFlight& f) { return !f.channel.out_of_band && f.path == path; });
  now_ += window_;  // the HCA retries for its whole window before giving up
  QpSim& q = sender_qps_[path];
  if (q.outstanding.empty() || q.state == QpState::Err) return;
  std::vector<CompletionEvent> errs;
  bool first = true;
  for (const auto& wr : q.outstanding) {
    errs.push_back({PathIndex{path}, wr.id, WrOpcode::Send, first ? WcStatus::RetryExcErr : WcStatus::WrFlushErr, 0,
                    std::nullopt});
    first = false;
  }
  q.outstanding.clear();
  q.state = QpState::Err;
  for (const auto& e : errs) feed(PairEnd::Sender, e);
}

bool PairWorld::fire_next_timer(Nanos horizon) {
  if (timers_.empty()) return false;
  auto best = timers_.begin();
  for (auto it = timers_.begin(); it != timers_.end(); ++it)
    if (it->second < best->second) best = it;
  if (best->second > now_ + horizon) return false;
  const auto [key, deadline] = *best;
  timers_.erase(best);
  if (deadline > now_) now_ = deadline;
  feed(static_cast<PairEnd>(key.first), TimerFired{TimerId{key.second}});
  return true;
}

void PairWorld::run(Nanos horizon) {
  const Nanos until = now_ + horizon;
  do {
    deliver_all();
  } while (fire_next_timer(until - now_));
  if (now_ < until) now_ = until;  // time passes even when nothing happens
}

bool PairWorld::deliver_first(InFlight::Kind kind, std::uint32_t path) {
  for (std::size_t i = 0; i < in_flight_.size(); ++i)
    if (in_flight_[i].kind == kind && in_flight_[i].path == path) return deliver(i);
  return false;
}

}  // namespace railcheck::verify
