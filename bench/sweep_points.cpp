// Points per second of a small sweep (sweeps/smoke.toml: short-flap, 4 points) with one and
// with two points at a time, measured side by side in one run; docs/sweeps.md records the figures.
// Run from the source root: build/bench/sweep_points
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "backends/sim/sweep/sweep_run.hpp"
#include "bench/machine_line.hpp"

namespace fs = std::filesystem;

int main() {
  railcheck::bench::print_machine_line();
  const fs::path railcheck = fs::read_symlink("/proc/self/exe").parent_path() / "../cli/railcheck";
  auto spec = railcheck::sweep::load_sweep_file("sweeps/smoke.toml");
  if (!spec || !fs::exists(railcheck)) {
    std::fprintf(stderr, "sweep_points: run from the source root after building railcheck (%s)\n",
                 spec ? railcheck.c_str() : spec.error().message().c_str());
    return 2;
  }
  double single = 0;
  for (unsigned jobs : {1U, 2U}) {
    const fs::path out = fs::temp_directory_path() / ("railcheck-sweep-bench-" + std::to_string(jobs));
    fs::remove_all(out);
    const auto start = std::chrono::steady_clock::now();
    auto t = railcheck::sweep::run_sweep(spec.value(),
                                         {out.string(), {railcheck.string(), "run"}, jobs, false, {}, nullptr});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fs::remove_all(out);
    if (!t || t->errors > 0) {
      std::fprintf(stderr, "sweep_points: the sweep failed\n");
      return 1;
    }
    const double rate = static_cast<double>(t->ran) / s;
    if (jobs == 1) single = rate;
    std::printf("jobs %u: %zu points in %.2f s = %.2f points/s (x%.2f of jobs 1)\n", jobs, t->ran, s, rate,
                rate / single);
  }
  return 0;
}
