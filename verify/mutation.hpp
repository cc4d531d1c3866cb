#pragma once
// Deliberately broken engine variants. The checker's own tests apply one to the actions the
// real engine emits and show that the invariant meant to catch it does (a mutation test: an
// invariant that no broken variant violates proves nothing). Each mutation models a plausible
// implementation slip, named after what it breaks.
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/core/action.hpp"

namespace railcheck::verify {

enum class Mutation : std::uint8_t {
  None,
  ReadyBeforeRts,     // hands out the comm before bringing the primary QP to RTS
  ReplaySwapped,      // re-posts the first two replayed sends in the wrong order
  ReplayDropsFirst,   // forgets the first WR of a replay
  ReplayForgetsRecv,  // a receiver re-posts every receive after a failover but the first
  SwallowFailure,     // fails the connection without telling the caller
  SkipLazyMr,         // posts on a standby's PD without registering the MR there
  NoStandbyOffer,     // never sends phase 2's standby parameters: no path to fail over to
  DoubleComplete,     // reports a finished request to the user twice
  // The rail-liveness detector keeps its probe timeout at the floor whatever the round trips
  // measure (RailLiveness::drop_rtt_adaptation; the liveness world applies it, no batch changes).
  DropRttAdaptation,
};

std::string_view to_string(Mutation m);
std::optional<Mutation> parse_mutation(std::string_view s);
std::string_view mutation_names();  // "none, ready-before-rts, ..." for messages

// Rewrite one batch of engine actions as the broken variant would have emitted it.
void apply_mutation(Mutation m, Actions& batch);

}  // namespace railcheck::verify
