// The ImmCounter world, step by step (imm_world.hpp).
#include "verify/imm/imm_world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace railcheck::imm {

std::string to_string(const ImmStep& s) {
  switch (s.kind) {
    case ImmStep::Kind::Fate: return fmt::format("write {} {}", s.seq, to_string(s.fate));
    case ImmStep::Kind::Land: return fmt::format("land write {}{}", s.seq, s.replay ? " (replayed copy)" : "");
    case ImmStep::Kind::Expect: return "register the expectation";
  }
  return "?";
}

ImmWorld::ImmWorld(const ImmModel& m) : writes_(m.writes) {
  schedule_.policy = m.policy;
  if (!m.failover) {
    schedule_.fates.assign(writes_, WriteFate::Acked);
    fates_decided();
  }
}

void ImmWorld::fates_decided() {
  Arrivals a = arrivals_of(schedule_.policy, schedule_.fates);
  before_ = std::move(a.before);
  after_ = std::move(a.after);
  schedule_.decided_at = a.failed ? before_.size() : before_.size() + after_.size();
}

std::vector<ImmStep> ImmWorld::choices() const {
  std::vector<ImmStep> out;
  if (outcome_) return out;
  if (schedule_.fates.size() < writes_) {
    const auto seq = static_cast<std::uint32_t>(schedule_.fates.size());
    for (const auto f : {WriteFate::Acked, WriteFate::AckLost, WriteFate::Lost, WriteFate::LateOnDeadPath})
      out.push_back({ImmStep::Kind::Fate, seq, f, false});
    return out;
  }
  for (const auto& l : before_.empty() ? after_ : before_) out.push_back({ImmStep::Kind::Land, l.seq, {}, l.replay});
  if (!expected_) out.push_back({ImmStep::Kind::Expect, 0, {}, false});
  return out;
}

void ImmWorld::apply(const ImmStep& s) {
  hash_.add(s.kind);
  hash_.add(s.seq);
  hash_.add(s.fate);
  hash_.add(s.replay);
  switch (s.kind) {
    case ImmStep::Kind::Fate:
      schedule_.fates.push_back(s.fate);
      if (schedule_.fates.size() == writes_) fates_decided();
      return;
    case ImmStep::Kind::Land: {
      auto& from = before_.empty() ? after_ : before_;
      const auto it = std::find_if(from.begin(), from.end(),
                                   [&](const Landing& l) { return l.seq == s.seq && l.replay == s.replay; });
      if (it != from.end()) from.erase(it);
      schedule_.landings.push_back({s.seq, s.replay});
      break;
    }
    case ImmStep::Kind::Expect:
      expected_ = true;
      schedule_.expect_at = schedule_.landings.size();
      break;
  }
  if (expected_ && before_.empty() && after_.empty()) outcome_ = run_schedule(schedule_);
}

namespace {

verify::Invariant<ImmWorld> holds(ImmInvariant inv, std::string description) {
  return {std::string(to_string(inv)), std::move(description),
          [inv](const ImmWorld& w, bool) -> std::optional<std::string> {
            if (!w.outcome()) return std::nullopt;
            const auto bad = violated(*w.outcome());
            if (std::find(bad.begin(), bad.end(), inv) == bad.end()) return std::nullopt;
            const auto& o = *w.outcome();
            return fmt::format(
                "the expectation fired {} time(s){}, a write was counted at most {} time(s); schedule: {}",
                o.completions, o.fired_with_writes_missing ? " (once with a write missing)" : "", o.max_counted_copies,
                describe(w.schedule()));
          }};
}

}  // namespace

std::span<const verify::Invariant<ImmWorld>> imm_invariants() {
  static const std::array<verify::Invariant<ImmWorld>, kImmInvariants> kAll = {
      holds(ImmInvariant::FiresExactlyOnce, "the receiver's expectation of N writes completes exactly once"),
      holds(ImmInvariant::FiresAfterEveryWrite, "it completes only after every write has landed"),
      holds(ImmInvariant::NoDoubleCount, "a replayed copy of a write that had landed is never counted again"),
  };
  return kAll;
}

}  // namespace railcheck::imm
