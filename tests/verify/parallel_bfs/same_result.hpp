#pragma once
// What the threaded and distributed searches' tests compare against the one-thread search: every
// figure and the verdict in one line (so a mismatch prints both), and the small failover bound
// and the seeded mutations that the failover checker tests (tests/verify) use too.
#include <fmt/format.h>

#include <string>

#include "verify/explorer.hpp"
#include "verify/failover_model.hpp"
#include "verify/mutation.hpp"

namespace railcheck::verify::testing {

template <typename World>
std::string figures(const SearchResult<World>& r) {
  const auto& s = r.stats;
  return fmt::format("states {} distinct {} end {} depth {} exhausted {} truncated_by '{}' violation {} steps {}",
                     s.states, s.distinct, s.end_states, s.max_depth, s.exhausted, s.truncated_by,
                     r.violation ? r.violation->invariant + ": " + r.violation->message : "none",
                     r.violation ? r.violation->steps.size() : 0);
}

// 2 paths, 2 messages one way, 1 rail failure, 1 loss, 1 timer race: a few thousand states.
inline FailoverModel small_failover_model(ReplayPolicy p) {
  FailoverModel m;
  m.paths = 2;
  m.messages = 2;
  m.bidirectional = false;
  m.link_failures = 1;
  m.losses = 1;
  m.timer_races = 1;
  m.tunables.replay = p;
  return m;
}

// Each deliberately broken engine variant (verify/mutation.hpp) with a bound that shows it and
// the invariant aimed at it. Replay-order mutations run under probe: under resync the
// receiver's own sequence check turns a misordered replay into a failed connection (defence in
// depth), which a different invariant then reports.
struct MutationCase {
  Mutation mutation;
  std::uint32_t failures;
  ReplayPolicy policy;
  const char* invariant;
};
inline constexpr MutationCase kMutationCases[] = {
    {Mutation::ReadyBeforeRts, 1, ReplayPolicy::Resync, "no-comm-before-rts"},
    {Mutation::ReplaySwapped, 1, ReplayPolicy::Probe, "exactly-once-in-order"},
    {Mutation::ReplayDropsFirst, 1, ReplayPolicy::Probe, "exactly-once-in-order"},
    {Mutation::SwallowFailure, 2, ReplayPolicy::Resync, "no-deadlock"},
    {Mutation::SkipLazyMr, 1, ReplayPolicy::Resync, "mr-registered-on-path"},
    {Mutation::NoStandbyOffer, 1, ReplayPolicy::Resync, "survives-while-a-path-is-clean"},
    {Mutation::DoubleComplete, 1, ReplayPolicy::Resync, "one-answer-per-request"},
};

inline FailoverModel mutated(const MutationCase& c) {
  FailoverModel m = small_failover_model(c.policy);
  m.link_failures = c.failures;
  m.mutation = c.mutation;
  // Without standby parameters phase 2 never finishes, so faults must be allowed before it.
  m.faults_during_handshake = c.mutation == Mutation::NoStandbyOffer;
  return m;
}

}  // namespace railcheck::verify::testing
