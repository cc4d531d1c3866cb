#pragma once
// The actor of one rank: it hands inbox items and expired timers to the engines of the
// connection ends this rank owns, executes the actions they return, and plays the user of each
// connection (StreamWorkload). It is the only place where engine actions meet SimGrid.
#include <cstdint>

#include "backends/sim/sim_world.hpp"

namespace railcheck::sim {

class RankDriver {
 public:
  RankDriver(SimWorld& w, std::uint32_t rank) : w_(w), rank_(rank) {}
  void operator()();  // actor body

 private:
  void start();
  // WireMode::Event: the same steps, and the rank's packets (event_wire.hpp) in the same loop.
  void run_event_loop();
  void dispatch(const InboxItem& item);
  void feed(std::uint32_t conn, Side side, const Event& ev);
  void execute(std::uint32_t conn, Side side, Actions& actions);
  bool fire_due_timers(Nanos now);  // true if one fired
  void pump_users(Nanos now);
  Nanos next_deadline(Nanos now) const;

  SimWorld& w_;
  std::uint32_t rank_;
};

}  // namespace railcheck::sim
