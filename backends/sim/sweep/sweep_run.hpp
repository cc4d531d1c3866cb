#pragma once
// Runs a sweep: writes each point's scenario under <out>/points/, runs the points as child
// `railcheck run` processes in parallel, and appends one row per finished run to the result
// log. Rows: index, point id, params, seed, exit_code, then the run's summary (railcheck run
// --json) — or outcome "error" and the child's last log line when it gave no summary.
#include <cstdio>
#include <string>
#include <vector>

#include "backends/sim/sweep/sweep_points.hpp"

namespace railcheck::sweep {

struct SweepConfig {
  std::string out_dir;
  // The command that runs one point; the point's scenario file, --seed S and --json FILE are
  // appended. Normally {"/path/to/railcheck", "run"}.
  std::vector<std::string> runner;
  unsigned jobs = 1;
  bool resume = false;
  Shard shard;
  std::FILE* progress = stderr;  // nullptr: silent
};

struct SweepTally {
  std::size_t points = 0;   // in this shard
  std::size_t skipped = 0;  // already finished (--resume)
  std::size_t ran = 0;
  std::size_t violations = 0;  // runs that exited 1: a duplicate, a loss or a hang
  std::size_t errors = 0;      // runs with no summary
};

Result<SweepTally> run_sweep(const SweepSpec& spec, const SweepConfig& cfg);

}  // namespace railcheck::sweep
