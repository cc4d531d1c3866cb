#pragma once
// Small helpers for reading an engine's action log in tests.
#include <cstddef>
#include <optional>
#include <variant>

#include "engine/core/action.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck::test {

// Index of the first action at or after `from` that satisfies `pred`.
template <typename Pred>
std::optional<std::size_t> find_action(const Actions& log, Pred pred, std::size_t from = 0) {
  for (std::size_t i = from; i < log.size(); ++i)
    if (pred(log[i])) return i;
  return std::nullopt;
}

inline auto is_trace(TraceKind k) {
  return [k](const Action& a) {
    const auto* t = std::get_if<Trace>(&a);
    return t != nullptr && t->note.kind == k;
  };
}

inline auto is_modify(std::uint32_t path, QpState target) {
  return [=](const Action& a) {
    const auto* m = std::get_if<ModifyQp>(&a);
    return m != nullptr && m->path.value == path && m->target == target;
  };
}

inline HaTunables quiet_tunables(ReplayPolicy p) {
  HaTunables t;
  t.replay = p;
  t.heartbeat_interval = sec(3600);  // keep heartbeats out of hand-built interleavings
  t.liveness = false;                // and liveness probes (rail_liveness_test.cpp has its own)
  return t;
}

}  // namespace railcheck::test
