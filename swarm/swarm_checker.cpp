#include "swarm/swarm_checker.hpp"

#include <fmt/format.h>

#include <array>

#include "backends/sim/sim_world.hpp"
#include "engine/core/engine_assert.hpp"

namespace railcheck::swarm {
namespace {

constexpr std::array<FailoverTrigger, 5> kTriggerKinds = {FailoverTrigger::ErrorCompletion, FailoverTrigger::SoftRto,
                                                          FailoverTrigger::PeerNotice, FailoverTrigger::ControlTimeout,
                                                          FailoverTrigger::RailDead};

const char* side_name(sim::Side s) { return s == sim::Side::Sender ? "sender" : "receiver"; }

}  // namespace

std::string_view to_string(FindingKind k) {
  switch (k) {
    case FindingKind::ExactlyOnce: return "exactly-once";
    case FindingKind::InOrder: return "in-order";
    case FindingKind::LostRequest: return "lost-request";
    case FindingKind::SilentFailure: return "silent-failure";
    case FindingKind::Assertion: return "assertion";
    case FindingKind::Liveness: return "liveness";
    case FindingKind::Crash: return "crash";
  }
  return "?";
}

void SwarmChecker::before_actions(sim::SimWorld& /*w*/, std::uint32_t /*conn*/, sim::Side /*side*/, Actions& batch) {
  verify::apply_mutation(mutation_, batch);
}

void SwarmChecker::after_actions(sim::SimWorld& w, std::uint32_t conn, sim::Side side, const Actions& batch) {
  ++batches_;
  mix(static_cast<std::uint64_t>(w.now().count()));
  mix((std::uint64_t{conn} << 1) | (side == sim::Side::Receiver ? 1 : 0));
  for (const Action& a : batch) {
    mix(a.index());
    if (const auto* t = std::get_if<Trace>(&a)) {
      mix(static_cast<std::uint64_t>(t->note.kind) << 32 | t->note.count);
      if (t->note.kind == TraceKind::FailoverStarted)
        for (std::size_t i = 0; i < kTriggerKinds.size(); ++i)
          if (t->note.detail.starts_with(to_string(kTriggerKinds[i]))) triggers_ |= 1U << i;
    } else if (const auto* r = std::get_if<CompleteRequest>(&a)) {
      mix(static_cast<std::uint64_t>(r->outcome));
    }
  }
  if (finding_) return;

  sim::SimConnection& c = w.connections()[conn];
  HaConnection& e = c.engine(side);
  phases_ |= 1U << static_cast<unsigned>(e.phase());
  if (watermark_.empty()) {
    watermark_.assign(w.connections().size(), 0);
    failed_.assign(w.connections().size() * 2, 0);
  }
  std::uint8_t& was_failed = failed_[conn * 2 + (side == sim::Side::Receiver ? 1 : 0)];

  if (assertion_failures() > 0)
    return report(w, FindingKind::Assertion, conn,
                  fmt::format("{} engine: {}", side_name(side), first_assertion_failure().describe()));
  const sim::StreamStats& st = c.workload->stats();
  if (st.duplicates + st.empty > 0)
    return report(w, FindingKind::ExactlyOnce, conn,
                  fmt::format("{} duplicate and {} empty buffer(s) delivered to the user", st.duplicates, st.empty));
  if (st.misplaced > 0)
    return report(w, FindingKind::InOrder, conn,
                  fmt::format("{} buffer(s) received another message than the one meant for them", st.misplaced));
  if (side == sim::Side::Receiver) {
    if (e.delivered() < watermark_[conn])
      return report(
          w, FindingKind::InOrder, conn,
          fmt::format("receiver's delivered watermark went back from {} to {}", watermark_[conn], e.delivered()));
    watermark_[conn] = e.delivered();
  }
  if (was_failed != 0 && !e.failed())
    return report(w, FindingKind::SilentFailure, conn, fmt::format("{} engine came back from Failed", side_name(side)));
  for (const Action& a : batch) {
    if (const auto* r = std::get_if<CompleteRequest>(&a); r != nullptr && r->outcome == RequestOutcome::Failed) {
      if (!e.failed())
        return report(w, FindingKind::LostRequest, conn,
                      fmt::format("{} request {} failed on a connection that has not failed ({})", side_name(side),
                                  r->request.value, r->error ? r->error->what : "no reason"));
    } else if (const auto* f = std::get_if<ConnectionFailed>(&a); f != nullptr && f->error.what.empty()) {
      return report(w, FindingKind::SilentFailure, conn,
                    fmt::format("{} connection failed with no reason", side_name(side)));
    }
  }
  if (e.failed()) was_failed = 1;
}

void SwarmChecker::at_end(sim::SimWorld& w) {
  if (finding_) return;
  for (sim::SimConnection& c : w.connections()) {
    if (c.done()) continue;
    const sim::StreamStats& st = c.workload->stats();
    return report(w, FindingKind::Liveness, c.id,
                  fmt::format("rank {} -> rank {}: {} of {} message(s) delivered, {} of {} send(s) complete, no error, "
                              "at the liveness bound {} (sender phase {}, receiver phase {})",
                              c.sender_rank, c.receiver_rank, st.delivered, c.workload->messages(), st.sends_completed,
                              c.workload->messages(), format_duration(w.scenario().time_limit),
                              to_string(c.sender->phase()), to_string(c.receiver->phase())));
  }
}

void SwarmChecker::report(sim::SimWorld& w, FindingKind k, std::uint32_t conn, std::string detail) {
  finding_ = Finding{k, w.now(), conn, std::move(detail)};
  w.stop();
}

}  // namespace railcheck::swarm
