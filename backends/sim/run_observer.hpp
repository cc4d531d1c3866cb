#pragma once
// A hook for tools that watch a simulated run from inside (the swarm's invariant checker,
// swarm/): it sees every batch of actions an engine hands back, before the driver
// carries it out (and may rewrite it, to run a deliberately broken engine) and after (when the
// world shows its effects), and the world once more when the run ends. `railcheck run` installs
// none; a run with an observer that only looks is the same run.
#include <cstdint>

#include "engine/core/action.hpp"

namespace railcheck::sim {

class SimWorld;
enum class Side : std::uint8_t;

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void before_actions(SimWorld& w, std::uint32_t conn, Side side, Actions& batch) = 0;
  virtual void after_actions(SimWorld& w, std::uint32_t conn, Side side, const Actions& batch) = 0;
  // The run is over (every connection finished, the time limit passed, or the run was stopped).
  virtual void at_end(SimWorld& w) = 0;
};

}  // namespace railcheck::sim
