// Two-phase non-blocking connection set-up (seed §3.2).
//   Phase 1: the listener publishes a handle with its primary endpoint; the connector brings its
//            primary QP to RTS against it and sends its own endpoint over the out-of-band
//            channel; the listener brings its primary to RTS and acknowledges. Until then
//            connect()/accept() hand out no comm (NCCL calls them again).
//   Phase 2: over the now-working primary, the connector offers its standby endpoints as an
//            internal control message, the listener answers with its own, and both bring the
//            standby QPs up in the background. Data flows on the primary meanwhile.
#include <fmt/format.h>

#include "engine/failover/ha_connection.hpp"

namespace railcheck {

ConnectionHandle HaConnection::listen(Actions& out) {
  role_ = ConnRole::Receiver;
  out.push_back(ModifyQp{PathIndex{0}, QpState::Init, std::nullopt, std::nullopt});
  paths_[0].qp = QpState::Init;
  return ConnectionHandle{paths_.size() > 1, paths_[0].local};
}

Result<bool> HaConnection::connect(Nanos now, std::span<const std::uint8_t> handle, Actions& out) {
  (void)now;
  auto decoded = decode_handle(handle);
  if (!decoded) return decoded.error();
  role_ = ConnRole::Sender;
  peer_is_ha_ = decoded->peer == HandlePeerKind::HaCapable && decoded->handle.dual_path;
  if (!peer_is_ha_) paths_.resize(1);  // graceful degradation: one path, no failover
  bring_up(PathIndex{0}, decoded->handle.primary, out);
  out.push_back(SendControl{ControlChannel::oob(), ConnectRequest{paths_[0].local}});
  return true;
}

void HaConnection::bring_up(PathIndex p, const QpEndpoint& remote, Actions& out) {
  PathState& s = paths_[p.value];
  s.remote = remote;
  if (s.qp == QpState::Reset) out.push_back(ModifyQp{p, QpState::Init, std::nullopt, std::nullopt});
  out.push_back(ModifyQp{p, QpState::Rtr, remote, tun_.qp});
  out.push_back(ModifyQp{p, QpState::Rts, std::nullopt, tun_.qp});
  s.qp = QpState::Rts;
}

void HaConnection::mark_comm_ready(Nanos now, Actions& out) {
  comm_ready_ = true;
  paths_[0].health = PathHealth::Ready;
  trace(TraceKind::PrimaryRts, PathIndex{0}, 0, "", out);
  out.push_back(ConnectionReady{});
  // Anything the user queued before the comm existed goes out now, in order.
  for (auto& e : table_.entries())
    if (!e.posted_on && !e.has_success_cqe) post(now, e, active_, out);
  arm_rto(now, out);
}

void HaConnection::on_connect_request(Nanos now, const ConnectRequest& m, Actions& out) {
  if (role_ != ConnRole::Receiver || comm_ready_) return;
  bring_up(PathIndex{0}, m.primary, out);
  out.push_back(SendControl{ControlChannel::oob(), ConnectAck{}});
  mark_comm_ready(now, out);
}

void HaConnection::on_connect_ack(Nanos now, Actions& out) {
  if (role_ != ConnRole::Sender || comm_ready_) return;
  mark_comm_ready(now, out);
  if (paths_.size() < 2) return;
  StandbyParams offer;
  for (std::size_t i = 1; i < paths_.size(); ++i) offer.endpoints.push_back(paths_[i].local);
  out.push_back(SendControl{ControlChannel::on(PathIndex{0}), std::move(offer)});
}

void HaConnection::on_standby_params(Nanos now, const StandbyParams& m, Actions& out) {
  if (!comm_ready_ || m.reply != (role_ == ConnRole::Sender)) return;
  // Use as many standbys as both sides have.
  const std::size_t n = std::min(m.endpoints.size(), paths_.size() - 1);
  paths_.resize(n + 1);
  if (role_ == ConnRole::Receiver) {
    StandbyParams answer{{}, true};
    for (std::size_t i = 1; i <= n; ++i) answer.endpoints.push_back(paths_[i].local);
    out.push_back(SendControl{ControlChannel::on(PathIndex{0}), std::move(answer)});
  }
  for (std::uint32_t i = 1; i <= n; ++i) {
    bring_up(PathIndex{i}, m.endpoints[i - 1], out);
    paths_[i].health = PathHealth::Ready;
    trace(TraceKind::StandbyReady, PathIndex{i}, 0, "phase 2", out);
  }
  arm_heartbeat(now, out);
}

}  // namespace railcheck
