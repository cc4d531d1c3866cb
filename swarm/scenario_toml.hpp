#pragma once
// A Scenario written back as a scenario file (docs/scenarios.md) that load_scenario_file()
// reads into the same Scenario: every field the loader knows, every engine tunable, times to
// the nanosecond. This is how a swarm world, shrunk, becomes a file `railcheck run` replays and
// scenarios/ keeps as a regression test.
#include <string>

#include "models/scenario.hpp"

namespace railcheck::swarm {

// `comment` goes at the top, each line prefixed with "# ".
std::string scenario_toml(const Scenario& sc, const std::string& comment);

}  // namespace railcheck::swarm
