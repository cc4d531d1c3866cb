#pragma once
// A sweep file: a base scenario, axes over its parameters, and seeds. Every combination of one
// value per axis and one seed is a point; each point is one `railcheck run`.
//
//   name = "rto-calibration"
//   scenario = "../scenarios/short-flap.toml"   # relative to the sweep file
//   command = "run"                              # or "budget": railcheck budget <point> per point
//   seeds = [1, 2, 3]                            # or seeds = { from = 1, count = 8 }
//   [[axis]]
//   key = "engine.rto_ms"                        # dotted path into the scenario; [i] picks an array entry
//   values = [100, 500, 1000]                    # or range = { from, to, step }
//   [[axis]]                                     # or log_range = { from, to, points }
//   key = "faults.link_down[0].until_ms"
//   range = { from = 40, to = 100, step = 20 }
#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::sweep {

struct Axis {
  std::string key;     // dotted scenario path, e.g. "faults.link_down[0].until_ms"
  toml::array values;  // in sweep order; numbers, strings or booleans
};

struct SweepSpec {
  std::string name;
  std::string source_path;    // the sweep file, for messages
  std::string scenario_path;  // resolved against the sweep file's folder
  // The railcheck subcommand each point runs: "run" (SimGrid), or "budget" (the maxComms study:
  // the point's NIC and budget tunables opened on a modeled HCA).
  std::string command = "run";
  toml::table scenario;  // the base scenario as parsed
  std::vector<Axis> axes;
  std::vector<std::uint64_t> seeds;
};

Result<SweepSpec> load_sweep_file(const std::string& path);
Result<SweepSpec> load_sweep_string(std::string_view text, const std::string& name_for_errors,
                                    const std::string& base_dir);

// How a value appears in point ids, CSV cells and messages: 100, 0.25, resync, true.
std::string format_value(const toml::node& v);

}  // namespace railcheck::sweep
