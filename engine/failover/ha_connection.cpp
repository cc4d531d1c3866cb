// The data path of an HA connection: user calls, posting, completions, results, soft RTO.
#include "engine/failover/ha_connection.hpp"

#include <fmt/format.h>

#include "engine/core/engine_assert.hpp"

namespace railcheck {

std::string_view to_string(FailoverTrigger t) {
  switch (t) {
    case FailoverTrigger::ErrorCompletion: return "error completion";
    case FailoverTrigger::SoftRto: return "soft RTO";
    case FailoverTrigger::PeerNotice: return "peer notice";
    case FailoverTrigger::ControlTimeout: return "control timeout";
    case FailoverTrigger::RailDead: return "rail liveness";
  }
  return "?";
}

std::string_view to_string(FailoverPhase p) {
  switch (p) {
    case FailoverPhase::Idle: return "idle";
    case FailoverPhase::Draining: return "draining";
    case FailoverPhase::AwaitProbeDelay: return "await-probe-delay";
    case FailoverPhase::AwaitPeer: return "await-peer";
    case FailoverPhase::Failed: return "failed";
  }
  return "?";
}

std::string_view to_string(PathHealth h) {
  switch (h) {
    case PathHealth::Connecting: return "connecting";
    case PathHealth::Ready: return "ready";
    case PathHealth::Suspect: return "suspect";
    case PathHealth::Dead: return "dead";
  }
  return "?";
}

HaConnection::HaConnection(HaConnectionConfig cfg)
    : role_(cfg.role), tun_(cfg.tunables), rto_(cfg.tunables), liveness_(cfg.tunables) {
  RAILCHECK_ASSERT(!cfg.paths.empty(), "an HA connection needs at least one path");
  for (const auto& p : cfg.paths) paths_.push_back(PathState{p.pd, p.local});
  if (!tun_.enable_backup) paths_.resize(1);
}

void HaConnection::handle(Nanos now, const Event& ev, Actions& out) {
  // Where the driver wants a tripped assertion to end the connection, it ends here, cleanly.
  const AssertionFence fence([&](const AssertionFailure& a) {
    if (!failed()) fail_connection("engine assertion failed: " + a.describe(), out);
  });
  if (const auto* c = std::get_if<CompletionEvent>(&ev)) return on_completion(now, *c, out);
  if (const auto* t = std::get_if<TimerFired>(&ev)) {
    if (rto_timer_ == t->timer) return on_rto_timer(now, out);
    if (heartbeat_timer_ == t->timer) return on_heartbeat_tick(now, out);
    if (control_timer_ == t->timer) return on_control_timeout(now, out);
    if (probe_timer_ == t->timer) return on_probe_delay(now, out);
    if (liveness_timer_ == t->timer) return on_liveness_timer(now, out);
    return;  // a timer we cancelled whose cancellation crossed its firing
  }
  if (const auto* r = std::get_if<UserRegMr>(&ev)) return on_reg_mr(*r, out);
  if (const auto* s = std::get_if<UserIsend>(&ev)) return on_isend(now, *s, out);
  if (const auto* r = std::get_if<UserIrecv>(&ev)) return on_irecv(now, *r, out);
  if (const auto* a = std::get_if<ProbeAnswered>(&ev)) return on_probe_answered(now, *a, out);
  const auto& cr = std::get<ControlReceived>(ev);
  const ControlMessage& m = cr.message;
  if (const auto* x = std::get_if<ConnectRequest>(&m)) return on_connect_request(now, *x, out);
  if (std::holds_alternative<ConnectAck>(m)) return on_connect_ack(now, out);
  if (const auto* x = std::get_if<StandbyParams>(&m)) return on_standby_params(now, *x, out);
  if (const auto* x = std::get_if<FailoverNotice>(&m))
    return on_peer_failover(now, x->epoch, x->failed, x->next, false, out);
  if (const auto* x = std::get_if<ResyncRequest>(&m))
    return on_peer_failover(now, x->epoch, x->failed, x->next, true, out);
  if (const auto* x = std::get_if<ResyncAck>(&m)) return on_resync_ack(now, *x, out);
  if (const auto* x = std::get_if<ProbeRequest>(&m)) return answer_probe(*x, cr.channel.path, out);
  if (const auto* x = std::get_if<ProbeReply>(&m)) return on_probe_reply(now, *x, out);
  if (const auto* x = std::get_if<Ping>(&m)) return on_ping(cr.channel, *x, out);
  if (const auto* x = std::get_if<Pong>(&m)) return on_pong(now, cr.channel, *x, out);
  if (const auto* x = std::get_if<PathRevive>(&m)) return on_revive(now, *x, out);
}

// ---- user calls ----

void HaConnection::on_reg_mr(const UserRegMr& e, Actions& out) {
  mrs_[e.mr] = e;
  // Register eagerly on the active path only; other PDs get it lazily when a WR needs it there.
  const PdId pd = paths_[active_.value].pd;
  if (registered_.insert({pd.value, e.mr.value}).second) out.push_back(RegisterMr{pd, e.mr, e.addr, e.length});
}

void HaConnection::on_isend(Nanos now, const UserIsend& e, Actions& out) {
  if (failed() || role_ != ConnRole::Sender) {
    out.push_back(CompleteRequest{
        e.request,
        RequestOutcome::Failed,
        {},
        Error{failed() ? "isend on a failed connection" : "isend on a receive connection", "close the comm"}});
    return;
  }
  InflightWr w;
  w.request = e.request;
  w.seq = next_seq_++;
  w.wr.opcode = WrOpcode::Send;
  w.wr.sges = {e.data};
  w.wr.tags = {e.tag};
  w.wr.imm = static_cast<std::uint32_t>(w.seq);  // the sequence number travels with the message
  w.post_time = now;
  InflightWr& entry = table_.append(std::move(w));
  RAILCHECK_ASSERT(table_.size() <= next_seq_, "the sender holds at most one entry per sequence number");
  if (data_path_open()) {
    post(now, entry, active_, out);
    arm_rto(now, out);
    arm_liveness(now, out);
  }
}

void HaConnection::on_irecv(Nanos now, const UserIrecv& e, Actions& out) {
  if (failed() || role_ != ConnRole::Receiver || e.buffers.empty() || e.buffers.size() != e.tags.size()) {
    out.push_back(CompleteRequest{
        e.request,
        RequestOutcome::Failed,
        {},
        Error{failed() ? "irecv on a failed connection"
                       : fmt::format("bad irecv: {} buffers, {} tags on a {} connection", e.buffers.size(),
                                     e.tags.size(), role_ == ConnRole::Sender ? "send" : "receive"),
              ""}});
    return;
  }
  for (std::uint32_t i = 0; i < e.buffers.size(); ++i) {
    InflightWr w;
    w.request = e.request;
    w.part = i;
    w.seq = next_seq_++;
    w.wr.opcode = WrOpcode::Recv;
    w.wr.sges = {e.buffers[i]};
    w.wr.tags = {e.tags[i]};
    w.post_time = now;
    InflightWr& entry = table_.append(std::move(w));
    if (data_path_open()) post(now, entry, active_, out);
  }
}

// ---- posting ----

std::size_t HaConnection::ensure_mrs_on(PathIndex p, const WorkRequest& wr, Actions& out) {
  std::size_t added = 0;
  const PdId pd = paths_[p.value].pd;
  for (const auto& sge : wr.sges) {
    auto it = mrs_.find(sge.mr);
    if (it == mrs_.end()) continue;  // unregistered memory: the backend reports LOC_PROT_ERR
    if (registered_.insert({pd.value, sge.mr.value}).second) {
      out.push_back(RegisterMr{pd, sge.mr, it->second.addr, it->second.length});
      ++added;
    }
  }
  return added;
}

void HaConnection::post(Nanos now, InflightWr& w, PathIndex p, Actions& out) {
  RAILCHECK_ASSERT(!w.posted_on,
                   "a WR is outstanding on at most one QP: re-posting one still posted would run it twice");
  RAILCHECK_ASSERT(!w.has_success_cqe, "a WR that completed successfully is never posted again");
  ensure_mrs_on(p, w.wr, out);
  table_.mark_posted(w, next_wr_id(), p, now);
  if (w.wr.opcode == WrOpcode::Recv) {
    out.push_back(PostRecv{p, w.wr});
  } else {
    out.push_back(PostSend{p, w.wr});
  }
}

// ---- completions ----

void HaConnection::on_completion(Nanos now, const CompletionEvent& e, Actions& out) {
  InflightWr* w = table_.find_by_wr(e.wr);
  if (w == nullptr) return;  // a posting we already gave up on (stale, as NCCL's generation ids)
  RAILCHECK_ASSERT(w->posted_on.has_value(), "the in-flight table indexes only outstanding postings");
  const PathIndex p = *w->posted_on;
  table_.mark_unposted(*w);
  if (e.status == WcStatus::Success) {
    w->byte_len = e.byte_len;
    if (role_ == ConnRole::Receiver) {
      on_recv_success(now, *w, e, out);
    } else {
      w->has_success_cqe = true;
      if (p == active_) liveness_.handle_data_completion(now);  // demand mode: traffic is the probe
    }
    if (failed()) return;
    complete_finished(out);
  } else if (phase_ == FailoverPhase::Idle && p == active_ && role_ == ConnRole::Sender) {
    // An error on the active path. Whatever the status, the QP is now in ERR and every later
    // WR will flush; only a failover can make progress.
    start_failover(now, FailoverTrigger::ErrorCompletion, std::string(to_string(e.status)), out);
    return;
  }
  // A receiver never decides a failover on its own: its receives cannot time out, and only the
  // sender knows which messages to replay. It waits for the sender's notice.
  if (phase_ == FailoverPhase::Draining && p == failing_ && table_.outstanding_on(failing_) == 0) on_drained(now, out);
}

void HaConnection::on_recv_success(Nanos now, InflightWr& w, const CompletionEvent& e, Actions& out) {
  const std::uint64_t seq = e.imm ? *e.imm : w.seq;
  if (tun_.replay == ReplayPolicy::Resync) {
    // Sequence numbers are 32 bits on the wire; widen relative to what we expect.
    const auto expected32 = static_cast<std::uint32_t>(delivered_);
    const auto behind = static_cast<std::uint32_t>(expected32 - static_cast<std::uint32_t>(seq));
    if (behind != 0 && behind < (1u << 31)) {
      // Already delivered: drop it and give the receive back to the QP. On RC this cannot
      // happen under resync (the receiver fences the old QP before reporting its watermark,
      // and the sender replays only beyond it), so this is a second line of defence. Its
      // limit: the re-posted receive goes to the tail of the queue, so a duplicate that did
      // arrive would shift later messages into the wrong buffers — the model checker
      // (issue 3) is what shows it never arrives.
      trace(TraceKind::DuplicateDropped, active_, delivered_ - behind, "receiver dropped a replayed message", out);
      post(now, w, active_, out);
      return;
    }
    if (behind != 0) {
      fail_connection(fmt::format("sequence gap: expected message {}, got {}", expected32, seq), out);
      return;
    }
  }
  w.has_success_cqe = true;
  ++delivered_;
  // Sequence numbers are 32 bits on the wire: compare them there.
  RAILCHECK_ASSERT(tun_.replay != ReplayPolicy::Resync ||
                       static_cast<std::uint32_t>(delivered_ - 1) == static_cast<std::uint32_t>(seq),
                   "under resync the receive watermark moves by exactly one message, in sequence order");
  if (seq >= record_low_) record_.insert(seq);
  while (!record_.empty() && *record_.begin() == record_low_) {
    record_.erase(record_.begin());
    ++record_low_;
  }
  RAILCHECK_ASSERT(record_.empty() || *record_.begin() > record_low_,
                   "the completion record's low mark covers every contiguous landed message");
}

void HaConnection::complete_finished(Actions& out) {
  table_.pop_finished([&](RequestId request, std::span<const InflightWr> parts) {
    auto& done =
        std::get<CompleteRequest>(out.emplace_back(CompleteRequest{request, RequestOutcome::Done, {}, std::nullopt}));
    for (const InflightWr& p : parts) done.sizes.push_back(p.byte_len);
  });
}

// ---- soft RTO: one timer, armed for the oldest outstanding posting ----

void HaConnection::arm_rto(Nanos now, Actions& out) {
  if (role_ != ConnRole::Sender || rto_timer_ || phase_ != FailoverPhase::Idle) return;
  const InflightWr* oldest = table_.oldest_outstanding();
  if (oldest == nullptr) return;
  const Nanos deadline = oldest->post_time + rto_.current();
  rto_timer_ = arm(deadline > now ? deadline : now, out);
}

void HaConnection::on_rto_timer(Nanos now, Actions& out) {
  rto_timer_.reset();
  if (phase_ != FailoverPhase::Idle) return;
  const InflightWr* oldest = table_.oldest_outstanding();
  if (oldest == nullptr) return;
  if (now - oldest->post_time >= rto_.current()) {
    // Probe and naive send their failover notice once, unacknowledged. A receiver that never got
    // it (lost on a rail that was down or flapping) still posts on the path we left: our sends
    // meet RNR forever, the HCA reports nothing, and neither branch below moves us. So whenever
    // the soft RTO expires and we stay, say it again; a receiver already on this path ignores
    // it. Found by the swarm: scenarios/swarm-1225-lost-notice.toml, swarm-3189-dead-standby.toml.
    const auto repeat_notice = [&] {
      if (epoch_ > 0 && tun_.replay != ReplayPolicy::Resync)
        out.push_back(SendControl{ControlChannel::on(active_), FailoverNotice{epoch_, failing_, active_}});
    };
    if (rail_answers(now)) {
      trace(TraceKind::RailVerdict, active_, 0,
            fmt::format("soft RTO expired on message {} but the rail answers probes: receiver not ready (RNR) "
                        "or peer process stalled, not failing over",
                        oldest->seq),
            out);
      repeat_notice();
      rto_timer_ = arm(now + rto_.current(), out);
      return;
    }
    if (!pick_next_path(active_)) {
      // A soft RTO is a suspicion, not a verdict: with no healthy standby to move to, failing
      // the connection would turn a slow path into a dead one. Keep waiting for the HCA (its
      // RETRY_EXC_ERR is the verdict) and look again one RTO later. Found by the model checker:
      // a delayed ACK during phase 2 otherwise failed a connection on a healthy rail.
      trace(TraceKind::PathFailed, active_, 0, "soft RTO with no healthy standby: waiting for the HCA", out);
      repeat_notice();
      rto_timer_ = arm(now + rto_.current(), out);
      return;
    }
    // The HCA has reported nothing for a whole soft RTO: it is still retrying (RNR, or a
    // hardware window longer than we were told) or the completion was lost.
    start_failover(now, FailoverTrigger::SoftRto,
                   fmt::format("no completion for {} after {}", oldest->seq, format_duration(now - oldest->post_time)),
                   out);
    return;
  }
  arm_rto(now, out);
}

// ---- helpers ----

TimerId HaConnection::arm(Nanos deadline, Actions& out) {
  const TimerId id{++timer_counter_};
  out.push_back(ArmTimer{id, deadline});
  return id;
}

void HaConnection::cancel(std::optional<TimerId>& t, Actions& out) {
  if (!t) return;
  out.push_back(CancelTimer{*t});
  t.reset();
}

void HaConnection::trace(TraceKind k, PathIndex p, std::uint64_t count, std::string detail, Actions& out) const {
  out.push_back(Trace{TraceNote{k, p, count, std::move(detail)}});
}

}  // namespace railcheck
