#pragma once
// Entry point of the SimGrid driver: one scenario, one seed, one run. A run is a pure function
// of (scenario, seed). Each call builds its own s4u::Engine; runs are sequential within a
// process (SimGrid keeps global state).
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "backends/sim/run_summary.hpp"
#include "backends/sim/wire_mode.hpp"
#include "engine/core/result.hpp"
#include "models/scenario.hpp"

namespace railcheck::sim {

struct RunOutput {
  RunSummary summary;
  std::vector<TraceRecord> traces;  // every engine trace note, time-stamped
};

// Called every couple of wall-clock seconds during long runs (simulated time so far,
// connections finished, connections in all, wall seconds).
using ProgressFn = std::function<void(Nanos sim_time, std::size_t done, std::size_t total, double wall_s)>;

std::optional<WireMode> parse_wire_mode(std::string_view s);  // "sendto" | "mailbox" | "event"
std::string_view to_string(WireMode m);

// The wire a run uses unless told otherwise: RAILCHECK_SIM_WIRE if set, else kDefaultWire. An
// unknown value is an error naming the variable.
Result<WireMode> default_wire_mode();

// `observer` (run_observer.hpp) sees every batch of engine actions; null for a plain run.
RunOutput run_scenario(const Scenario& sc, std::uint64_t seed, const ProgressFn& progress = {},
                       WireMode wire = kDefaultWire, RunObserver* observer = nullptr);

}  // namespace railcheck::sim
