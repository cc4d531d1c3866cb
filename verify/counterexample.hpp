#pragma once
// Counterexamples of the failover world: a readable step-by-step account, and a trace file
// that `railcheck replay` re-executes through the engine.
//
// Trace file (JSON):
//   { "railcheck_trace": 1, "world": "failover",
//     "model": { "paths": 3, ..., "engine": { "replay_policy": "naive", "qp_timeout": 14, ... } },
//     "invariant": "exactly-once-in-order", "message": "...",
//     "steps": ["ctrl c0 p3 t1", "data c0 p0", ..., "kill p0", "timer"] }
// The model holds every knob the world and the engine read, so a trace replays with no other
// input; a step that is not possible when replayed means the engine or the world changed.
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_world.hpp"

namespace railcheck::verify {

struct FailoverTrace {
  FailoverModel model;
  std::vector<Choice> steps;
  std::string invariant;  // what the recording run found (informational)
  std::string message;
};

std::string write_trace_json(const FailoverTrace& t);
Result<FailoverTrace> read_trace_json(std::string_view text, const std::string& name_for_errors);
Result<FailoverTrace> read_trace_file(const std::string& path);

struct ReplayOutcome {
  std::vector<std::string> lines;                // numbered steps with what happened in each
  std::optional<std::string> invariant;          // the first invariant violated, if any
  std::optional<std::string> message;
  std::size_t steps_run = 0;
};

// Re-execute `t.steps` from the initial world, checking `invariants` after every step (and as
// an end state after the last one, if no step is left). Error: a step that is not possible.
Result<ReplayOutcome> replay_trace(const FailoverTrace& t, std::span<const Invariant<FailoverWorld>> invariants);

}  // namespace railcheck::verify
