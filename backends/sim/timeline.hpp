#pragma once
// A run as a timeline in the Chrome trace-event format, which ui.perfetto.dev and
// chrome://tracing open. One process per rank, one thread (track) per connection end and path;
// a "links" process holds one track per faulted link with its outages and jitter windows.
// Engine notes are instant events grouped by category (setup, detection, failover, replay);
// each failover is also a span from its start to the switch (or to the connection failing).
#include <nlohmann/json.hpp>

#include "backends/sim/sim_run.hpp"
#include "models/scenario.hpp"

namespace railcheck::sim {

nlohmann::json timeline_json(const Scenario& sc, const RunOutput& out);

}  // namespace railcheck::sim
