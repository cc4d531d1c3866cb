// The failover sequence (seed §16.1, in this order and no other):
//   1. the failed QP goes to ERR, so it accepts nothing more and flushes what it holds;
//   2. drain: wait until every outstanding WR on it has completed or flushed;
//   3. switch the active path;
//   4. register, lazily, the MRs the replay needs on the new path's protection domain;
//   5. replay according to the policy, in original posting order.
// The receiver follows the sender: it fences its own side of the failed path (steps 1-4) and
// re-posts its receives, then, under `resync`, reports its delivered watermark.
#include <fmt/format.h>

#include <algorithm>

#include "engine/core/engine_assert.hpp"
#include "engine/failover/ha_connection.hpp"

namespace railcheck {

std::optional<PathIndex> HaConnection::pick_next_path(PathIndex failed) const {
  const auto n = static_cast<std::uint32_t>(paths_.size());
  for (std::uint32_t k = 1; k < n; ++k) {
    const PathIndex p{(failed.value + k) % n};
    if (paths_[p.value].health == PathHealth::Ready) return p;
  }
  return std::nullopt;
}

void HaConnection::start_failover(Nanos now, FailoverTrigger trigger, std::string detail, Actions& out) {
  if (phase_ != FailoverPhase::Idle) return;  // one failover at a time; later errors join it
  const PathIndex failed = active_;
  cancel(rto_timer_, out);
  cancel(liveness_timer_, out);
  trace(TraceKind::FailoverStarted, failed, epoch_ + 1, fmt::format("{}: {}", to_string(trigger), detail), out);
  PathState& f = paths_[failed.value];
  f.health = PathHealth::Dead;
  f.failed_at = now;
  trace(TraceKind::PathFailed, failed, 0, std::string(to_string(trigger)), out);

  const auto next = pick_next_path(failed);
  if (!next) {
    fail_connection(
        fmt::format("path {} failed ({}: {}) and no healthy standby is left", failed.value, to_string(trigger), detail),
        out);
    return;
  }
  ++epoch_;
  failing_ = failed;
  next_ = *next;
  RAILCHECK_ASSERT(next_ != failing_ && paths_[next_.value].health == PathHealth::Ready,
                   "a failover moves to another path, and only to a healthy one");
  phase_ = FailoverPhase::Draining;
  out.push_back(ModifyQp{failed, QpState::Err, std::nullopt, std::nullopt});  // step 1
  f.qp = QpState::Err;
  if (table_.outstanding_on(failed) == 0) on_drained(now, out);  // step 2 is already done
}

void HaConnection::on_drained(Nanos now, Actions& out) {
  RAILCHECK_ASSERT(phase_ == FailoverPhase::Draining && table_.outstanding_on(failing_) == 0,
                   "the switch happens only once the failed QP has flushed every WR it held (seed 16.1 step 2)");
  trace(TraceKind::Drained, failing_, 0, "", out);
  active_ = next_;  // step 3
  liveness_.watch(now);  // the new rail's round trips are its own
  trace(TraceKind::Switched, active_, failing_.value, fmt::format("from path {}", failing_.value), out);

  std::size_t registered = 0;  // step 4
  for (const auto& e : table_.entries())
    if (!e.has_success_cqe) registered += ensure_mrs_on(active_, e.wr, out);
  trace(TraceKind::MrRegisteredLazily, active_, registered, "", out);

  if (role_ == ConnRole::Receiver) {
    phase_ = FailoverPhase::Idle;
    replay(
        now, [](std::uint64_t) { return false; }, out);
    if (reply_watermark_) out.push_back(SendControl{ControlChannel::on(active_), ResyncAck{epoch_, delivered_}});
    return;
  }
  // Find out at once whether the failed path is really dead: a quick answer means the
  // failover was a false alarm (seed §16.7).
  PathState& old = paths_[failing_.value];
  old.ping_outstanding = ++ping_counter_;
  out.push_back(SendControl{ControlChannel::on(failing_), Ping{*old.ping_outstanding}});
  after_switch_sender(now, out);
}

void HaConnection::after_switch_sender(Nanos now, Actions& out) {
  switch (tun_.replay) {
    case ReplayPolicy::Naive:
      out.push_back(SendControl{ControlChannel::on(active_), FailoverNotice{epoch_, failing_, active_}});
      phase_ = FailoverPhase::Idle;
      // The seed's rule: everything without a success completion goes again.
      replay(
          now, [](std::uint64_t) { return false; }, out);
      arm_rto(now, out);
      arm_liveness(now, out);
      return;
    case ReplayPolicy::Resync:
      out.push_back(SendControl{ControlChannel::on(active_), ResyncRequest{epoch_, failing_, active_}});
      phase_ = FailoverPhase::AwaitPeer;
      control_timer_ = arm(now + tun_.control_timeout, out);
      return;
    case ReplayPolicy::Probe:
      out.push_back(SendControl{ControlChannel::on(active_), FailoverNotice{epoch_, failing_, active_}});
      phase_ = FailoverPhase::AwaitProbeDelay;
      probe_timer_ = arm(now + tun_.probe_delay, out);
      return;
  }
}

template <typename Landed>
void HaConnection::replay(Nanos now, Landed landed, Actions& out) {
  RAILCHECK_ASSERT(phase_ == FailoverPhase::Idle && table_.outstanding_on(failing_) == 0,
                   "replay runs after the switch, with the data path open and nothing left on the failed QP");
  std::uint64_t count = 0;
  for (auto& e : table_.entries()) {
    if (e.has_success_cqe || e.posted_on) continue;
    if (landed(e.seq)) {
      // The peer has it: complete without sending it again.
      e.has_success_cqe = true;
      e.byte_len = static_cast<std::uint32_t>(e.wr.total_bytes());
      continue;
    }
    post(now, e, active_, out);
    ++count;
  }
  trace(TraceKind::Replayed, active_, count, std::string(to_string(tun_.replay)), out);
  complete_finished(out);
}

void HaConnection::on_resync_ack(Nanos now, const ResyncAck& m, Actions& out) {
  if (phase_ != FailoverPhase::AwaitPeer || m.epoch != epoch_ || tun_.replay != ReplayPolicy::Resync) return;
  cancel(control_timer_, out);
  trace(TraceKind::ResyncWatermark, active_, m.delivered, "", out);
  phase_ = FailoverPhase::Idle;
  replay(
      now, [&](std::uint64_t seq) { return seq < m.delivered; }, out);
  arm_rto(now, out);
  arm_liveness(now, out);
}

void HaConnection::on_probe_delay(Nanos now, Actions& out) {
  probe_timer_.reset();
  if (phase_ != FailoverPhase::AwaitProbeDelay) return;
  ProbeRequest req{epoch_, {}};
  for (const auto& e : table_.entries())
    if (!e.has_success_cqe) req.seqs.push_back(e.seq);
  out.push_back(SendControl{ControlChannel::on(active_), std::move(req)});
  phase_ = FailoverPhase::AwaitPeer;
  control_timer_ = arm(now + tun_.control_timeout, out);
}

void HaConnection::answer_probe(const ProbeRequest& m, PathIndex reply_on, Actions& out) {
  // Served by the receiver's NIC in the real design (an RDMA READ of the record): no fencing.
  ProbeReply reply{m.epoch, {}};
  for (const auto seq : m.seqs)
    if (seq < record_low_ || record_.count(seq) != 0) reply.delivered.push_back(seq);
  out.push_back(SendControl{ControlChannel::on(reply_on), std::move(reply)});
}

void HaConnection::on_probe_reply(Nanos now, const ProbeReply& m, Actions& out) {
  if (phase_ != FailoverPhase::AwaitPeer || m.epoch != epoch_ || tun_.replay != ReplayPolicy::Probe) return;
  cancel(control_timer_, out);
  trace(TraceKind::ProbeResult, active_, m.delivered.size(), "", out);
  phase_ = FailoverPhase::Idle;
  replay(
      now,
      [&](std::uint64_t seq) { return std::find(m.delivered.begin(), m.delivered.end(), seq) != m.delivered.end(); },
      out);
  arm_rto(now, out);
  arm_liveness(now, out);
}

void HaConnection::on_control_timeout(Nanos now, Actions& out) {
  control_timer_.reset();
  if (phase_ != FailoverPhase::AwaitPeer) return;
  // The new path did not carry the peer's answer: it is no better than the one we left.
  phase_ = FailoverPhase::Idle;
  start_failover(
      now, FailoverTrigger::ControlTimeout,
      fmt::format("no answer from the peer on path {} within {}", active_.value, format_duration(tun_.control_timeout)),
      out);
}

void HaConnection::on_peer_failover(Nanos now, std::uint32_t epoch, PathIndex failed_path, PathIndex next,
                                    bool wants_watermark, Actions& out) {
  if (role_ != ConnRole::Receiver || failed()) return;
  if (next.value >= paths_.size()) return;  // a path we never agreed on: ignore, the sender times out
  // Notices travel on different paths and can overtake each other. One older than the failover
  // we already followed must not move us back: the sender has left that path (found by the
  // model checker: a stale notice fenced the path the sender was replaying on, and it hung).
  if (epoch < epoch_) return;
  reply_watermark_ = wants_watermark;
  if (active_ == next && phase_ == FailoverPhase::Idle) {
    // Already fenced and switched (the sender asked again): answer again.
    if (wants_watermark) out.push_back(SendControl{ControlChannel::on(active_), ResyncAck{epoch, delivered_}});
    return;
  }
  if (phase_ == FailoverPhase::Draining) {
    next_ = next;  // still draining the previous failure; switch straight to the newest path
    epoch_ = epoch;
    return;
  }
  epoch_ = epoch;
  failing_ = active_;
  next_ = next;
  PathState& f = paths_[failing_.value];
  f.health = PathHealth::Dead;
  f.failed_at = now;
  trace(TraceKind::FailoverStarted, failing_, epoch,
        fmt::format("{}: sender failed over from path {} to path {}", to_string(FailoverTrigger::PeerNotice),
                    failed_path.value, next.value),
        out);
  phase_ = FailoverPhase::Draining;
  out.push_back(ModifyQp{failing_, QpState::Err, std::nullopt, std::nullopt});
  f.qp = QpState::Err;
  if (table_.outstanding_on(failing_) == 0) on_drained(now, out);
}

void HaConnection::fail_connection(std::string why, Actions& out) {
  phase_ = FailoverPhase::Failed;
  cancel(rto_timer_, out);
  cancel(heartbeat_timer_, out);
  cancel(control_timer_, out);
  cancel(probe_timer_, out);
  cancel(liveness_timer_, out);
  for (std::uint32_t p = 0; p < paths_.size(); ++p) {
    if (paths_[p].qp != QpState::Err && paths_[p].qp != QpState::Reset) {
      out.push_back(ModifyQp{PathIndex{p}, QpState::Err, std::nullopt, std::nullopt});
      paths_[p].qp = QpState::Err;
    }
  }
  trace(TraceKind::ConnectionFailed, active_, 0, why, out);
  const Error err{why, "every path of this connection is down; the communicator must be aborted"};
  for (const RequestId r : table_.drain_all()) out.push_back(CompleteRequest{r, RequestOutcome::Failed, {}, err});
  out.push_back(ConnectionFailed{err});
  RAILCHECK_ASSERT(table_.empty() && !why.empty(), "a failed connection holds nothing and says why it failed");
}

}  // namespace railcheck
