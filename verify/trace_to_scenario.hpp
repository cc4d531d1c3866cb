#pragma once
// The part of a failover counterexample that the SimGrid driver can run: its rail deaths and
// repairs become timed link faults of a scenario with the same paths, messages, policy and
// tunables. Orderings, single losses and timer races have no timed equivalent (the simulator
// picks its own interleaving), so the scenario replays the faults, not the interleaving: a
// violation that needs one exact ordering (the naive duplicate needs one lost ACK) may not
// show there. `railcheck replay --sim` runs it.
#include <string>

#include "verify/counterexample.hpp"

namespace railcheck::verify {

struct TimedFaultScenario {
  std::string toml;              // a scenario file's text
  std::size_t faults = 0;        // rail deaths and repairs carried over
  std::size_t left_out = 0;      // losses, which have no timed equivalent
};

TimedFaultScenario trace_to_scenario(const FailoverTrace& t);

}  // namespace railcheck::verify
