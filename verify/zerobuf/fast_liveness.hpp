#pragma once
// The two liveness invariants the fast-path worlds share (ll_world.hpp, direct_world.hpp): a
// World here has ranks() whose elements carry `phase` (FastPhase), `waited_peer` (the peer a
// Failed rank timed out on) and `skipped_wait` (went past a timed-out wait), and deaths().
//   no-deadlock          at an end state every rank finished, died or failed; with no death,
//                        nobody failed (a timeout without a death is a hang the timeout hid)
//   dead-peer-is-error   with a dead rank, every other rank ends finished or failed on a peer
//                        that is dead or failed itself, and none went past a wait without an error
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

#include "verify/invariant.hpp"
#include "verify/zerobuf/fast_values.hpp"

namespace railcheck::verify::zerobuf {

template <typename World>
Invariant<World> no_deadlock_invariant() {
  return {"no-deadlock", "at the end every rank has finished, died or failed; with no death, every rank finished",
          [](const World& w, bool at_end) -> std::optional<std::string> {
            if (!at_end) return std::nullopt;
            for (std::uint32_t r = 0; r < w.ranks().size(); ++r) {
              const auto& k = w.ranks()[r];
              if (k.phase == FastPhase::InCall) return fmt::format("rank {} waits forever (no step left anywhere)", r);
              if (k.phase == FastPhase::Failed && w.deaths() == 0)
                return fmt::format("rank {} timed out waiting for rank {} though every rank is alive: a hang", r,
                                   k.waited_peer.value_or(0));
            }
            return std::nullopt;
          }};
}

template <typename World>
Invariant<World> dead_peer_is_error_invariant() {
  return {"dead-peer-is-error",
          "with a dead rank, every other rank ends having finished every call, or failed with a timeout naming a peer "
          "that is dead or failed",
          [](const World& w, bool at_end) -> std::optional<std::string> {
            if (!at_end || w.deaths() == 0) return std::nullopt;
            for (std::uint32_t r = 0; r < w.ranks().size(); ++r) {
              const auto& k = w.ranks()[r];
              if (k.phase == FastPhase::Dead) continue;
              if (k.skipped_wait)
                return fmt::format("rank {} went past a wait its dead peer never satisfied, without an error", r);
              if (k.phase == FastPhase::Finished) continue;
              if (k.phase != FastPhase::Failed) return fmt::format("rank {} neither finished nor failed", r);
              const auto p = k.waited_peer.value_or(r);
              const auto peer = w.ranks()[p].phase;
              if (peer != FastPhase::Dead && peer != FastPhase::Failed)
                return fmt::format("rank {} failed waiting for rank {}, which is alive and well", r, p);
            }
            return std::nullopt;
          }};
}

// An access the world saw and recorded under this invariant's name (World::bad_access).
template <typename World>
Invariant<World> recorded_violation(std::string name, std::string description) {
  return {name, std::move(description),
          [name](const World& w, bool) -> std::optional<std::string> { return w.bad_access(name); }};
}

}  // namespace railcheck::verify::zerobuf
