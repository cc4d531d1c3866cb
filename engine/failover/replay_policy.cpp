#include "engine/failover/replay_policy.hpp"

namespace railcheck {

std::string_view to_string(ReplayPolicy p) {
  switch (p) {
    case ReplayPolicy::Naive: return "naive";
    case ReplayPolicy::Probe: return "probe";
    case ReplayPolicy::Resync: return "resync";
  }
  return "?";
}

std::optional<ReplayPolicy> parse_replay_policy(std::string_view s) {
  if (s == "naive") return ReplayPolicy::Naive;
  if (s == "probe") return ReplayPolicy::Probe;
  if (s == "resync") return ReplayPolicy::Resync;
  return std::nullopt;
}

}  // namespace railcheck
