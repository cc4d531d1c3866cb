// The active rail's liveness probes (issue 28); the detector itself is rail_liveness.hpp.
// Only the sender probes, and only while it waits for completions on the active rail (BFD's
// demand mode): a receiver never decides a failover (it follows the sender's notice), and an
// idle rail owes nobody an answer.
#include <fmt/format.h>

#include "engine/core/engine_assert.hpp"
#include "engine/failover/ha_connection.hpp"

namespace railcheck {

void HaConnection::arm_liveness(Nanos now, Actions& out) {
  if (role_ != ConnRole::Sender || !liveness_.enabled() || liveness_timer_ || phase_ != FailoverPhase::Idle) return;
  if (table_.outstanding_on(active_) == 0) return;
  // The timer is down only while the rail carried nothing, or right after a switch: either way
  // the silence before now was expected.
  liveness_.resume(now);
  const Nanos at = liveness_.next_check();
  RAILCHECK_ASSERT(at > now, "resume() starts a fresh quiet period");
  liveness_timer_ = arm(at, out);
}

void HaConnection::on_liveness_timer(Nanos now, Actions& out) {
  liveness_timer_.reset();
  if (phase_ != FailoverPhase::Idle || table_.outstanding_on(active_) == 0) return;  // idle: stop probing
  RailLiveness::Check c = liveness_.on_check(now);
  if (c.probe) out.push_back(ProbeRail{active_, *c.probe});
  if (c.dead) {
    if (!pick_next_path(active_)) {
      // As with the soft RTO: a verdict with nowhere to go would turn a dead rail into a failed
      // connection before the HCA has had its say. Its RETRY_EXC_ERR decides.
      trace(TraceKind::RailVerdict, active_, liveness_.misses(),
            fmt::format("dead ({}), no healthy standby: waiting for the HCA", c.why), out);
      return;
    }
    trace(TraceKind::RailVerdict, active_, liveness_.misses(), fmt::format("dead: {}", c.why), out);
    start_failover(now, FailoverTrigger::RailDead, c.why, out);
    return;
  }
  const Nanos at = liveness_.next_check();
  RAILCHECK_ASSERT(at > now, "on_check() handled everything due now");
  liveness_timer_ = arm(at, out);
}

void HaConnection::on_probe_answered(Nanos now, const ProbeAnswered& a, Actions& out) {
  if (role_ != ConnRole::Sender || a.path != active_) return;  // an answer from a rail we left
  const RailVerdict before = liveness_.verdict();
  const RailVerdict after = liveness_.handle_answer(now, a.nonce);
  if (after == before) return;
  const Nanos srtt = liveness_.srtt().value_or(Nanos{0});
  trace(TraceKind::RailVerdict, active_, static_cast<std::uint64_t>(srtt.count()),
        fmt::format("{}: probe answered, smoothed RTT {}, probe timeout {}", to_string(after), format_duration(srtt),
                    format_duration(liveness_.pto())),
        out);
}

bool HaConnection::rail_answers(Nanos now) const {
  // Within two probe timeouts: the detector probes every timeout while data is stuck.
  return role_ == ConnRole::Sender && liveness_.enabled() && liveness_.answered(now, 2 * liveness_.pto());
}

}  // namespace railcheck
