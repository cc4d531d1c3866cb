// The liveness sweeps (sweeps/liveness-*.toml, issue 28) run in one process: the same points,
// scenarios and seeds as `railcheck sweep`, and rows of the same results.jsonl shape, without a
// child process per point (which is most of a short run's cost: ~7 points/s on 2 cores with
// `railcheck sweep`, ~50-100 here). Every row names its seed; `railcheck run <point> --seed S`
// replays one.
// Usage: liveness_sweep <sweep.toml> <results.jsonl> [first point] [point count]
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "backends/sim/run_summary.hpp"
#include "backends/sim/sim_run.hpp"
#include "backends/sim/sweep/sweep_points.hpp"

using namespace railcheck;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: liveness_sweep <sweep.toml> <results.jsonl> [first point] [point count]\n");
    return 2;
  }
  auto spec = sweep::load_sweep_file(argv[1]);
  if (!spec) {
    std::fprintf(stderr, "%s\n", spec.error().message().c_str());
    return 2;
  }
  const auto points = sweep::expand(spec.value());
  const std::size_t first = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 0;
  const std::size_t count = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : points.size();
  std::ofstream out(argv[2], std::ios::app);
  if (!out) {
    std::fprintf(stderr, "liveness_sweep: cannot write %s\n", argv[2]);
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t done = 0;
  int status = 0;
  for (std::size_t i = first; i < points.size() && i < first + count; ++i) {
    const auto& p = points[i];
    auto text = sweep::point_scenario(spec.value(), p);
    auto sc = text ? load_scenario_string(text.value(), p.id) : Result<Scenario>(text.error());
    if (!sc) {
      std::fprintf(stderr, "point %zu (%s): %s\n", i, p.id.c_str(), sc.error().message().c_str());
      return 2;
    }
    const auto run = sim::run_scenario(sc.value(), p.seed);
    nlohmann::json row = sim::to_json(run.summary);
    row["index"] = p.index;
    row["point"] = p.id;
    row["seed"] = p.seed;
    row["exit_code"] = 0;
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : p.params) params[k] = v;
    row["params"] = params;
    out << row.dump() << '\n';
    if (run.summary.outcome != sim::RunOutcome::Delivered) status = 1;
    ++done;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "liveness_sweep %s: %zu points in %.1f s (%.1f points/s)\n", spec->name.c_str(), done, s,
               done / (s > 0 ? s : 1));
  return status;
}
