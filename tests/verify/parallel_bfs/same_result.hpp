#pragma once
// What the threaded and distributed bfs tests compare against the one-thread search: every
// figure and the verdict in one line (so a mismatch prints both), and the small failover bound
// the failover checker tests (tests/verify) use too.
#include <fmt/format.h>

#include <string>

#include "verify/explorer.hpp"
#include "verify/failover_model.hpp"

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

}  // namespace railcheck::verify::testing
