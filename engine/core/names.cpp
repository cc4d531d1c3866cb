// Human-readable names of core enums and message variants.
#include "engine/core/control_message.hpp"
#include "engine/core/trace.hpp"

namespace railcheck {

std::string_view control_name(const ControlMessage& m) {
  struct Name {
    std::string_view operator()(const ConnectRequest&) const { return "ConnectRequest"; }
    std::string_view operator()(const ConnectAck&) const { return "ConnectAck"; }
    std::string_view operator()(const StandbyParams&) const { return "StandbyParams"; }
    std::string_view operator()(const FailoverNotice&) const { return "FailoverNotice"; }
    std::string_view operator()(const ResyncRequest&) const { return "ResyncRequest"; }
    std::string_view operator()(const ResyncAck&) const { return "ResyncAck"; }
    std::string_view operator()(const ProbeRequest&) const { return "ProbeRequest"; }
    std::string_view operator()(const ProbeReply&) const { return "ProbeReply"; }
    std::string_view operator()(const Ping&) const { return "Ping"; }
    std::string_view operator()(const Pong&) const { return "Pong"; }
    std::string_view operator()(const PathRevive&) const { return "PathRevive"; }
  };
  return std::visit(Name{}, m);
}

std::string_view to_string(TraceKind k) {
  switch (k) {
    case TraceKind::PrimaryRts: return "primary-rts";
    case TraceKind::StandbyReady: return "standby-ready";
    case TraceKind::PathFailed: return "path-failed";
    case TraceKind::FailoverStarted: return "failover-started";
    case TraceKind::Drained: return "drained";
    case TraceKind::Switched: return "switched";
    case TraceKind::MrRegisteredLazily: return "mr-registered-lazily";
    case TraceKind::Replayed: return "replayed";
    case TraceKind::ResyncWatermark: return "resync-watermark";
    case TraceKind::ProbeResult: return "probe-result";
    case TraceKind::DuplicateDropped: return "duplicate-dropped";
    case TraceKind::HeartbeatMissed: return "heartbeat-missed";
    case TraceKind::FalseAlarm: return "false-alarm";
    case TraceKind::RtoWidened: return "rto-widened";
    case TraceKind::ConnectionFailed: return "connection-failed";
    case TraceKind::RailVerdict: return "rail-verdict";
  }
  return "?";
}

}  // namespace railcheck
