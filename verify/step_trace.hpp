#pragma once
// Counterexample traces of the worlds other than failover (plan-channels, plan-lifecycle, imm):
// the model, as the model-file text its loader reads back, and the steps, as the text each
// world's to_string gives them. Replaying matches every recorded step against the steps the
// world offers at that point, so a trace that no longer fits the world says so at the step
// where it stops fitting; nothing is parsed but the model.
//
// Trace file (JSON):
//   { "railcheck_trace": 1, "world": "plan-channels",
//     "model_toml": "world = \"plan-channels\"\npolicy = \"passsm\"\n...",
//     "invariant": "channel-agreement", "message": "...",
//     "steps": ["ranks 2", "fifo-depth 4", "pair 0->0 none", ...] }
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "verify/explorer.hpp"

namespace railcheck::verify {

struct StepTrace {
  std::string world;       // "plan-channels", "plan-lifecycle", "imm"
  std::string model_toml;  // a model file that rebuilds the initial world
  std::string invariant;   // what the recording run found (informational)
  std::string message;
  std::vector<std::string> steps;
};

std::string write_step_trace(const StepTrace& t);
// Error: not JSON, not a step trace, no steps. `world` is not checked here (the caller
// dispatches on it).
Result<StepTrace> read_step_trace(std::string_view text, const std::string& name_for_errors);
// The "world" of a railcheck trace file ("failover" for the failover world's), or nothing when
// the text is not a railcheck trace.
std::optional<std::string> trace_world(std::string_view text);

struct StepReplay {
  std::vector<std::string> lines;        // numbered steps
  std::optional<std::string> invariant;  // the first invariant violated, if any
  std::optional<std::string> message;
  std::size_t steps_run = 0;
};

// Re-execute `steps` from `w` (left at the last step run), checking `invariants` on the initial
// state, after every step, and as an end state when no step is left. Error: a step the world
// does not offer there.
template <typename World>
Result<StepReplay> replay_steps(World& w, std::span<const std::string> steps,
                                std::span<const Invariant<World>> invariants) {
  StepReplay out;
  auto judge = [&](bool at_end) {
    const auto bad = detail::check_all<World>(w, invariants, at_end);
    if (bad) {
      out.invariant = bad->first;
      out.message = bad->second;
    }
    return bad.has_value();
  };
  if (judge(w.choices().empty())) return out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto options = w.choices();
    const auto it = std::find_if(options.begin(), options.end(),
                                 [&](const typename World::ChoiceType& c) { return to_string(c) == steps[i]; });
    if (it == options.end()) {
      std::string possible;
      for (const auto& o : options) possible += (possible.empty() ? "" : ", ") + to_string(o);
      return Error{fmt::format("step {} \"{}\" is not possible here (possible: {})", i + 1, steps[i],
                               possible.empty() ? "none" : possible),
                   "the world changed since the trace was recorded"};
    }
    w.apply(*it);
    out.lines.push_back(fmt::format("{:>3}. {}", i + 1, steps[i]));
    out.steps_run = i + 1;
    if (judge(w.choices().empty())) return out;
  }
  return out;
}

}  // namespace railcheck::verify
