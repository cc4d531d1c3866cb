// Standby health (seed §3.4 "heartbeat"): the sender pings every standby when the connection is
// idle, and every dead path always (so a repaired link is noticed, and a false alarm is
// measured); the receiver answers. A standby that misses `heartbeat_misses` pings in a row is
// not a failover candidate until it answers again.
#include <fmt/format.h>

#include "engine/failover/ha_connection.hpp"

namespace railcheck {

void HaConnection::arm_heartbeat(Nanos now, Actions& out) {
  if (role_ != ConnRole::Sender || failed() || heartbeat_timer_ || paths_.size() < 2) return;
  heartbeat_timer_ = arm(now + tun_.heartbeat_interval, out);
}

void HaConnection::on_heartbeat_tick(Nanos now, Actions& out) {
  heartbeat_timer_.reset();
  if (failed()) return;
  const bool idle = table_.empty();
  for (std::uint32_t i = 0; i < paths_.size(); ++i) {
    PathState& s = paths_[i];
    const PathIndex p{i};
    if (p == active_ || s.health == PathHealth::Connecting) continue;
    if (s.ping_outstanding && s.health != PathHealth::Dead) {
      ++s.missed_pings;
      trace(TraceKind::HeartbeatMissed, p, s.missed_pings, "", out);
      if (s.missed_pings >= tun_.heartbeat_misses && s.health == PathHealth::Ready) {
        s.health = PathHealth::Suspect;
        trace(TraceKind::PathFailed, p, s.missed_pings, "standby stopped answering heartbeats", out);
      }
    }
    if (!idle && s.health != PathHealth::Dead) continue;  // the seed pings standbys only when idle
    s.ping_outstanding = ++ping_counter_;
    out.push_back(SendControl{ControlChannel::on(p), Ping{*s.ping_outstanding}});
  }
  arm_heartbeat(now, out);
}

void HaConnection::on_ping(const ControlChannel& ch, const Ping& m, Actions& out) {
  out.push_back(SendControl{ch, Pong{m.nonce}});
}

void HaConnection::on_pong(Nanos now, const ControlChannel& ch, const Pong& m, Actions& out) {
  if (ch.out_of_band || ch.path.value >= paths_.size()) return;
  PathState& s = paths_[ch.path.value];
  if (s.ping_outstanding != m.nonce) return;  // an old answer
  s.ping_outstanding.reset();
  s.missed_pings = 0;
  if (s.health == PathHealth::Suspect) {
    s.health = PathHealth::Ready;
    trace(TraceKind::StandbyReady, ch.path, 0, "answers heartbeats again", out);
    return;
  }
  if (s.health != PathHealth::Dead || !s.remote) return;
  // A path we failed over from answers. If it answered quickly, the failover was not needed.
  if (s.failed_at) {
    const Nanos since = now - *s.failed_at;
    if (since <= tun_.false_alarm_window)
      trace(TraceKind::FalseAlarm, ch.path, 0, fmt::format("answered {} after failover", format_duration(since)), out);
    if (rto_.on_failed_path_answered(since))
      trace(TraceKind::RtoWidened, ch.path, static_cast<std::uint64_t>(to_millis(rto_.current())),
            fmt::format("soft RTO now {}", format_duration(rto_.current())), out);
    s.failed_at.reset();
  }
  // Revive it: reset our QP, bring it back to RTS, and ask the peer to do the same.
  out.push_back(ModifyQp{ch.path, QpState::Reset, std::nullopt, std::nullopt});
  s.qp = QpState::Reset;
  bring_up(ch.path, *s.remote, out);
  s.health = PathHealth::Connecting;
  out.push_back(SendControl{ControlChannel::on(ch.path), PathRevive{ch.path, false}});
}

void HaConnection::on_revive(Nanos now, const PathRevive& m, Actions& out) {
  (void)now;
  if (m.path.value >= paths_.size() || m.path == active_ || failed()) return;
  PathState& s = paths_[m.path.value];
  if (!s.remote) return;
  if (!m.ack) {
    if (s.qp != QpState::Reset) out.push_back(ModifyQp{m.path, QpState::Reset, std::nullopt, std::nullopt});
    s.qp = QpState::Reset;
    bring_up(m.path, *s.remote, out);
    s.health = PathHealth::Ready;
    s.failed_at.reset();
    out.push_back(SendControl{ControlChannel::on(m.path), PathRevive{m.path, true}});
  } else if (s.health == PathHealth::Connecting) {
    s.health = PathHealth::Ready;
  } else {
    return;
  }
  trace(TraceKind::StandbyReady, m.path, 0, "revived", out);
}

}  // namespace railcheck
