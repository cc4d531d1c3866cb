// Invariants of an HA connection, judged on the failover world's states and records.
#include "verify/failover_invariants.hpp"

#include <fmt/format.h>

#include "engine/core/rc_timeouts.hpp"

namespace railcheck::verify {
namespace {

using Verdict = std::optional<std::string>;

// Every completed receive buffer holds the next message, never one twice, never out of order.
// At the end, a connection that did not fail delivered every message.
Verdict exactly_once_in_order(const FailoverWorld& w, bool at_end) {
  for (std::size_t c = 0; c < w.conns().size(); ++c) {
    const ConnWorld& cw = w.conns()[c];
    for (std::size_t i = 0; i < cw.delivered.size(); ++i) {
      if (cw.delivered[i] == i) continue;
      const auto got = cw.delivered[i];
      for (std::size_t j = 0; j < i; ++j)
        if (cw.delivered[j] == got)
          return fmt::format("connection {}: message {} delivered twice (buffers {} and {})", c, got, j, i);
      if (got == ~0ULL) return fmt::format("connection {}: receive {} completed with nothing in its buffer", c, i);
      return fmt::format("connection {}: buffer {} holds message {} (order broken)", c, i, got);
    }
    // Every receive answered "done" while a message is missing: only possible through a failed
    // receive without a failed connection. (Unanswered work is no-deadlock's to report.)
    if (at_end && w.work_finished() && !cw.failed[kReceiver] && !cw.failed[kSender] &&
        cw.delivered.size() < w.model().messages)
      return fmt::format("connection {}: only {} of {} messages delivered and the connection did not fail", c,
                         cw.delivered.size(), w.model().messages);
  }
  return std::nullopt;
}

// NCCL gets the comm only once the primary QP is RTS (seed §3.2).
Verdict no_comm_before_rts(const FailoverWorld& w, bool) {
  for (std::size_t c = 0; c < w.conns().size(); ++c)
    for (const auto& r : w.conns()[c].ready_records)
      if (r.primary_qp != QpState::Rts)
        return fmt::format("connection {}: the {} handed out the comm while its primary QP was {}", c,
                           r.end == kSender ? "sender" : "receiver", to_string(r.primary_qp));
  return std::nullopt;
}

// Unfinished user work with nothing left that could finish it, short of a new fault. A
// connection that failed must have told the caller (every request answered).
Verdict no_deadlock(const FailoverWorld& w, bool at_end) {
  if (w.work_finished() || (!at_end && w.can_progress())) return std::nullopt;
  for (std::size_t c = 0; c < w.conns().size(); ++c) {
    const ConnWorld& cw = w.conns()[c];
    if (cw.failed[kSender] || cw.failed[kReceiver]) continue;  // the caller was told
    const auto recvs_done = cw.completed[kReceiver].size() * w.model().recv_group;
    if (cw.completed[kSender].size() < w.model().messages || recvs_done < w.model().messages)
      return fmt::format(
          "connection {}: stuck at t={} with {} of {} sends and {} of {} receives answered (sender {}, receiver {})", c,
          format_duration(w.now()), cw.completed[kSender].size(), w.model().messages, recvs_done, w.model().messages,
          to_string(cw.engine[kSender].phase()), to_string(cw.engine[kReceiver].phase()));
  }
  return std::nullopt;
}

// A soft-RTO failover only after the hardware has had its whole retry window (seed §16.2): the
// soft RTO must not pre-empt an HCA that is still retrying.
Verdict failover_after_hardware_window(const FailoverWorld& w, bool) {
  const Nanos window = hardware_retry_window(w.model().tunables.qp);
  for (std::size_t c = 0; c < w.conns().size(); ++c)
    for (const auto& f : w.conns()[c].failovers) {
      if (f.trigger.rfind(to_string(FailoverTrigger::SoftRto), 0) != 0) continue;
      if (f.oldest_age && *f.oldest_age < window)
        return fmt::format("connection {}: soft-RTO failover at t={} after only {} without an ACK (hardware window {})",
                           c, format_duration(f.at), format_duration(*f.oldest_age), format_duration(window));
    }
  return std::nullopt;
}

// Every WR names memory registered on the protection domain of the path it is posted on
// (lazy registration, seed §3.3): otherwise the HCA fails it with LOC_PROT_ERR.
Verdict mr_registered_on_path(const FailoverWorld& w, bool) {
  for (std::size_t c = 0; c < w.conns().size(); ++c)
    for (const auto& f : w.conns()[c].mr_faults)
      return fmt::format("connection {}: the {} posted MR {} on path {} without registering it on that PD", c,
                         f.end == kSender ? "sender" : "receiver", f.mr.value, f.path.value);
  return std::nullopt;
}

// Each user request gets exactly one answer.
Verdict one_answer_per_request(const FailoverWorld& w, bool) {
  for (std::size_t c = 0; c < w.conns().size(); ++c)
    if (w.conns()[c].double_completions != 0)
      return fmt::format("connection {}: a request was completed twice", c);
  return std::nullopt;
}

// With a path that suffered no fault, the connection must not fail: N paths survive any number
// of faults short of all of them.
Verdict survives_while_a_path_is_clean(const FailoverWorld& w, bool) {
  if (w.paths_hit() >= w.model().paths) return std::nullopt;
  for (std::size_t c = 0; c < w.conns().size(); ++c) {
    const ConnWorld& cw = w.conns()[c];
    if (cw.failed[kSender] || cw.failed[kReceiver])
      return fmt::format("connection {}: failed although only {} of {} paths had a fault", c, w.paths_hit(),
                         w.model().paths);
  }
  return std::nullopt;
}

}  // namespace

const std::vector<Invariant<FailoverWorld>>& failover_invariants() {
  static const std::vector<Invariant<FailoverWorld>> all = {
      {"exactly-once-in-order", "every connection delivers each message once, in order, into the right buffer",
       exactly_once_in_order},
      {"no-comm-before-rts", "connect/accept hand out the comm only once the primary QP is RTS", no_comm_before_rts},
      {"no-deadlock", "unfinished work can always progress, or the caller has been told the connection failed",
       no_deadlock},
      {"failover-after-hardware-window", "a soft-RTO failover never pre-empts the HCA's own retry window",
       failover_after_hardware_window},
      {"mr-registered-on-path", "every WR uses memory registered on the PD of the path it is posted on",
       mr_registered_on_path},
      {"one-answer-per-request", "every user request completes exactly once", one_answer_per_request},
      {"survives-while-a-path-is-clean", "a connection with a fault-free path never fails",
       survives_while_a_path_is_clean},
  };
  return all;
}

}  // namespace railcheck::verify
