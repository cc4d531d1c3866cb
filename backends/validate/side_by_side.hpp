#pragma once
// The answer of `railcheck validate`: one scenario's outcome and figures as the SimGrid driver
// predicted them and as the lab measured them (medians of repeated runs), each with whether the
// two agree within the tolerance: times within 10 % or 2 ms, whichever is larger; goodput within
// 10 %; counts exactly (issue 41).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/conform/lab_failover.hpp"
#include "backends/sim/run_summary.hpp"

namespace railcheck::validation {

struct Tolerance {
  double time_ratio = 0.10;
  double time_floor_ms = 2.0;
  double goodput_ratio = 0.10;
  // Messages delivered after the fault on a connection the engine then ended: within 10 % or this
  // many, whichever is larger (a window in flight at the fault may land or not on either side).
  double messages_floor = 8;
};

struct Row {
  std::string metric;  // "detection_ms", "goodput_before_gbps", "lost", ...
  std::optional<double> sim;       // the median over the sim's predictions
  std::vector<double> sim_runs;
  std::optional<double> hardware;  // the median over the lab's runs; empty: not measured there
  std::vector<double> hardware_runs;
  bool agree = true;  // a row one side did not measure agrees vacuously and says so
};

struct SideBySide {
  std::string scenario;
  std::string sim_outcome;
  std::string hardware_outcome;  // every run's, when they differ: "delivered (3 of 3)"
  std::vector<Row> rows;
  std::vector<std::string> changes;  // what validation changed of the scenario (lab_scenario.hpp)
  std::string machine;               // where the lab ran, and whether its sides ran SCHED_FIFO
  // What the lab showed that the sim does not model yet, per run: the provider's stalls (calls of
  // 1 ms or more) in the 100 ms after the fault, on each side.
  std::vector<std::string> lab_notes;
  bool agree() const;
};

// `sims[i]`: the sim's prediction from the calibration taken just before lab run `lab[i]` (the
// lab's rate drifts with the machine's load). Each column is the median of its runs; agreement is
// judged on the pairs: the median of (lab - sim) per run for times, of (lab - sim) / the larger
// for goodput, every pair equal for counts. `message_bytes`: the stream's.
SideBySide compare(const std::string& scenario, const std::vector<sim::RunSummary>& sims, std::uint64_t message_bytes,
                   const std::vector<conform::LabFailoverResult>& lab, const Tolerance& tol);

// One line per row: metric | sim | hardware | difference | agree.
std::string to_text(const SideBySide& s);
// {"scenario", "outcome": {"sim", "hardware"}, "rows": [{"metric", "sim", "hardware", "hardware_runs", "agree"}],
//  "changes", "machine", "agree"}; times as *_ms in milliseconds.
nlohmann::json to_json(const SideBySide& s);

}  // namespace railcheck::validation
