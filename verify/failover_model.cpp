#include <fmt/format.h>

#include "verify/failover_model.hpp"

namespace railcheck::verify {

FailoverModel standard_bound(ReplayPolicy policy) {
  FailoverModel m;
  m.name = fmt::format("standard-{}", to_string(policy));
  m.tunables.replay = policy;
  return m;
}

std::string describe(const FailoverModel& m) {
  std::string s = fmt::format(
      "{}, {} paths, {} msgs {}, {} rail failures, {} repairs, {} losses, {} timer races, {} transport",
      to_string(m.tunables.replay), m.paths, m.messages, m.bidirectional ? "each way" : "one way", m.link_failures,
      m.link_repairs, m.losses, m.timer_races, m.ordered ? "RC (ordered)" : "unordered");
  if (m.recv_group > 1) s += fmt::format(", grouped receives of {}", m.recv_group);
  if (m.interleave_user_calls) s += ", user calls interleaved";
  if (m.faults_during_handshake) s += ", faults during the handshake";
  if (m.probes) s += ", rail-liveness probes";
  if (m.mutation != Mutation::None) s += fmt::format(", mutation {}", to_string(m.mutation));
  return s;
}

}  // namespace railcheck::verify
