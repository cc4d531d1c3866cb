#include <fmt/format.h>

#include <filesystem>
#include <thread>

#include "backends/sim/sweep/sweep_run.hpp"
#include "cli/commands.hpp"

namespace railcheck::cli {

int cmd_sweep(const SweepOptions& o) {
  auto spec = sweep::load_sweep_file(o.sweep_file);
  if (!spec) {
    fmt::print(stderr, "railcheck: {}\n", spec.error().message());
    return kExitBadInput;
  }
  sweep::SweepConfig cfg;
  cfg.out_dir = o.out.empty() ? "sweep-results/" + spec->name : o.out;
  cfg.jobs = o.jobs.value_or(std::max(1U, std::thread::hardware_concurrency()));
  cfg.resume = o.resume;
  if (!o.shard.empty()) {
    auto shard = sweep::parse_shard(o.shard);
    if (!shard) {
      fmt::print(stderr, "railcheck: {}\n", shard.error().message());
      return kExitBadInput;
    }
    cfg.shard = shard.value();
  }
  // Each point runs as `railcheck run` (or the spec's command) in its own process: SimGrid is
  // configured once per process.
  std::error_code ec;
  const std::string self = o.runner.empty() ? std::filesystem::read_symlink("/proc/self/exe", ec).string() : o.runner;
  cfg.runner = {self, spec->command};

  auto tally = sweep::run_sweep(spec.value(), cfg);
  if (!tally) {
    fmt::print(stderr, "railcheck: {}\n", tally.error().message());
    return kExitBadInput;
  }
  const auto& t = tally.value();
  fmt::print("sweep {}: {} points in this shard, {} already done, {} ran ({} violations, {} errors); results in {}\n",
             spec->name, t.points, t.skipped, t.ran, t.violations, t.errors, cfg.out_dir);
  if (t.errors > 0) {
    fmt::print(stderr, "railcheck: {} points gave no summary; their logs are {}/points/p*.log\n", t.errors,
               cfg.out_dir);
    return kExitViolation;
  }
  if (t.violations > 0) {
    fmt::print(stderr, "railcheck: {} points found a violation; each row's point id and seed replay it\n",
               t.violations);
    return kExitViolation;
  }
  return kExitOk;
}

}  // namespace railcheck::cli
