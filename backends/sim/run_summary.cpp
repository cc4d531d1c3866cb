#include "backends/sim/run_summary.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railcheck::sim {

std::string_view to_string(RunOutcome o) {
  switch (o) {
    case RunOutcome::Delivered: return "delivered";
    case RunOutcome::ConnectionFailed: return "connection-failed";
    case RunOutcome::Corrupted: return "corrupted";
    case RunOutcome::Hung: return "hung";
  }
  return "?";
}

RunSummary summarize(SimWorld& w, std::uint64_t seed, double wall_seconds) {
  const Scenario& sc = w.scenario();
  RunSummary s;
  s.scenario = sc.name;
  s.seed = seed;
  s.replay_policy = std::string(to_string(sc.engine.replay));
  s.fault_at = first_fault_time(sc.faults);
  s.disturbance_at = first_benign_fault_time(sc.faults);
  s.end_time = w.now();
  s.wall_seconds = wall_seconds;
  s.counters = w.counters();

  for (const auto& t : w.traces()) {
    const bool sender = t.side == Side::Sender;
    switch (t.note.kind) {
      case TraceKind::FailoverStarted:
        if (!sender) break;
        ++s.failovers;
        if (!s.fault_at || t.at < *s.fault_at) ++s.false_failovers;
        if (!s.detected_at) {
          s.detected_at = t.at;
          s.detected_by = t.note.detail;
        }
        break;
      case TraceKind::Switched:
        if (sender && !s.switched_at) s.switched_at = t.at;
        break;
      case TraceKind::Replayed: (sender ? s.wrs_replayed : s.recvs_reposted) += t.note.count; break;
      case TraceKind::FalseAlarm: ++s.false_alarms; break;
      case TraceKind::RtoWidened: ++s.rto_widenings; break;
      default: break;
    }
  }

  std::optional<Nanos> stream_start;
  std::uint64_t corrupt = 0;
  std::uint64_t bytes_before = 0;
  std::uint64_t bytes_after = 0;
  Nanos last_delivery{0};
  for (auto& c : w.connections()) {
    const StreamStats& st = c.workload->stats();
    ++s.connections;
    if (st.connection_failed) {
      ++s.connections_failed;
      if (st.failed_at && (!s.failed_at || *st.failed_at < *s.failed_at)) s.failed_at = st.failed_at;
    }
    if (c.sender->failovers() > 0) ++s.connections_switched;
    s.messages_expected += c.workload->messages();
    s.messages_delivered += st.delivered;
    s.duplicates += st.duplicates;
    s.misplaced += st.misplaced;
    corrupt += st.duplicates + st.misplaced + st.empty;
    if (st.ready_at && (!stream_start || *st.ready_at < *stream_start)) stream_start = st.ready_at;
    for (const Nanos t : st.delivery_times) {
      if (s.fault_at && t < *s.fault_at) bytes_before += c.workload->message_bytes();
      if (s.fault_at && t >= *s.fault_at) ++s.delivered_after_fault;
      if (s.switched_at && t >= *s.switched_at) {
        bytes_after += c.workload->message_bytes();
        if (!s.flowing_at || t < *s.flowing_at) s.flowing_at = t;
      }
      last_delivery = std::max(last_delivery, t);
    }
  }
  s.lost = s.messages_expected - std::min(s.messages_expected, s.messages_delivered);
  if (stream_start && s.fault_at && *s.fault_at > *stream_start)
    s.gbps_before_fault = static_cast<double>(bytes_before) * 8 / to_seconds(*s.fault_at - *stream_start) * 1e-9;
  if (s.switched_at && last_delivery > *s.switched_at)
    s.gbps_after_switch = static_cast<double>(bytes_after) * 8 / to_seconds(last_delivery - *s.switched_at) * 1e-9;
  // From the first delivery after the switch: what the lab measures (a switch onto a path that is
  // dead too waits out its control timeout before anything flows).
  if (s.flowing_at && last_delivery > *s.flowing_at)
    s.gbps_after_flowing = static_cast<double>(bytes_after) * 8 / to_seconds(last_delivery - *s.flowing_at) * 1e-9;

  if (corrupt > 0) {
    s.outcome = RunOutcome::Corrupted;
    s.outcome_detail = fmt::format("{} duplicate, {} misplaced, {} empty buffer(s) delivered to the user", s.duplicates,
                                   s.misplaced, corrupt - s.duplicates - s.misplaced);
  } else if (s.connections_failed > 0) {
    s.outcome = RunOutcome::ConnectionFailed;
    s.outcome_detail =
        fmt::format("{} of {} connection(s) reported an error to the caller", s.connections_failed, s.connections);
  } else if (s.lost > 0) {
    s.outcome = RunOutcome::Hung;
    s.outcome_detail = fmt::format("{} message(s) outstanding at the time limit {} with no error reported", s.lost,
                                   format_duration(sc.time_limit));
  } else {
    s.outcome = RunOutcome::Delivered;
    s.outcome_detail = "every message delivered exactly once, in order";
  }
  return s;
}

namespace {
nlohmann::json opt_ms(const std::optional<Nanos>& t) {
  return t ? nlohmann::json(to_millis(*t)) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json to_json(const RunSummary& s) {
  return nlohmann::json{
      {"scenario", s.scenario},
      {"seed", s.seed},
      {"replay_policy", s.replay_policy},
      {"outcome", std::string(to_string(s.outcome))},
      {"outcome_detail", s.outcome_detail},
      {"fault_ms", opt_ms(s.fault_at)},
      {"detected_ms", opt_ms(s.detected_at)},
      {"detected_by", s.detected_by},
      {"switched_ms", opt_ms(s.switched_at)},
      {"flowing_ms", opt_ms(s.flowing_at)},
      {"detection_ms",
       s.fault_at && s.detected_at ? nlohmann::json(to_millis(*s.detected_at - *s.fault_at)) : nlohmann::json(nullptr)},
      {"error_ms", opt_ms(s.failed_at)},
      {"fault_to_flowing_ms",
       s.fault_at && s.flowing_at ? nlohmann::json(to_millis(*s.flowing_at - *s.fault_at)) : nlohmann::json(nullptr)},
      {"false_failovers", s.false_failovers},
      {"failovers", s.failovers},
      {"wrs_replayed", s.wrs_replayed},
      {"recvs_reposted", s.recvs_reposted},
      {"false_alarms", s.false_alarms},
      {"rto_widenings", s.rto_widenings},
      {"connections", s.connections},
      {"connections_failed", s.connections_failed},
      {"connections_switched", s.connections_switched},
      {"messages_expected", s.messages_expected},
      {"messages_delivered", s.messages_delivered},
      {"duplicates", s.duplicates},
      {"misplaced", s.misplaced},
      {"lost", s.lost},
      {"gbps_before_fault", s.gbps_before_fault},
      {"gbps_after_switch", s.gbps_after_switch},
      {"end_ms", to_millis(s.end_time)},
      {"wall_seconds", s.wall_seconds},
      {"counters",
       {{"engine_events", s.counters.events},
        {"engine_actions", s.counters.actions},
        {"data_packets", s.counters.data_packets},
        {"retransmissions", s.counters.retransmissions},
        {"rnr_naks", s.counters.rnr_naks},
        {"control_messages", s.counters.control_messages},
        {"control_lost", s.counters.control_lost},
        {"probes", s.counters.probes},
        {"probes_answered", s.counters.probes_answered},
        {"mr_registrations", s.counters.mr_registrations}}},
  };
}

std::string to_text(const RunSummary& s) {
  auto at = [](const std::optional<Nanos>& t) { return t ? format_duration(*t) : std::string("-"); };
  std::string out;
  out += fmt::format("scenario   {}  (seed {}, replay policy {})\n", s.scenario, s.seed, s.replay_policy);
  out += fmt::format("outcome    {}: {}\n", to_string(s.outcome), s.outcome_detail);
  out += fmt::format("fault      {}\n", at(s.fault_at));
  const auto after_fault = [&](const std::optional<Nanos>& t) {
    return t && s.fault_at && *t >= *s.fault_at
               ? fmt::format(" ({} after the fault)", format_duration(*t - *s.fault_at))
               : std::string();
  };
  out += fmt::format("detected   {}{}{}\n", at(s.detected_at), after_fault(s.detected_at),
                     s.detected_by.empty() ? "" : "  by " + s.detected_by);
  out += fmt::format("switched   {}  ({} failover(s) on {} of {} connection(s), {} failed)\n", at(s.switched_at),
                     s.failovers, s.connections_switched, s.connections, s.connections_failed);
  if (s.flowing_at)
    out +=
        fmt::format("flowing    {}{}  (first delivery on the new path)\n", at(s.flowing_at), after_fault(s.flowing_at));
  if (s.false_failovers > 0)
    out += fmt::format("false      {} failover(s) with no outage to cause them\n", s.false_failovers);
  out += fmt::format("replayed   {} send WR(s), {} receive(s) re-posted; {} false alarm(s), {} RTO widening(s)\n",
                     s.wrs_replayed, s.recvs_reposted, s.false_alarms, s.rto_widenings);
  out += fmt::format("messages   {} of {} delivered, {} duplicate, {} misplaced, {} lost\n", s.messages_delivered,
                     s.messages_expected, s.duplicates, s.misplaced, s.lost);
  out +=
      fmt::format("throughput {:.1f} Gb/s before the fault, {:.1f} Gb/s after the switch (payload, all connections)\n",
                  s.gbps_before_fault, s.gbps_after_switch);
  out += fmt::format(
      "sim time   {}  (wall {:.2f} s, {} engine events, {} retransmissions, {} RNR NAKs, {} of {} probes answered)\n",
      format_duration(s.end_time), s.wall_seconds, s.counters.events, s.counters.retransmissions, s.counters.rnr_naks,
      s.counters.probes_answered, s.counters.probes);
  return out;
}

}  // namespace railcheck::sim
