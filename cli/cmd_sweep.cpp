#include <fmt/format.h>

#include <filesystem>

#include "backends/sim/sweep/mpi_sweep.hpp"
#include "backends/sim/sweep/sweep_run.hpp"
#include "cli/commands.hpp"

namespace railcheck::cli {
namespace {

int summarize(const std::string& name, const sweep::SweepTally& t, const std::string& where, const std::string& out_dir,
              const std::string& logs) {
  fmt::print("sweep {}: {} points{}, {} already done, {} ran ({} violations, {} errors); results in {}\n", name,
             t.points, where, t.skipped, t.ran, t.violations, t.errors, out_dir);
  if (t.errors > 0) {
    fmt::print(stderr, "railcheck: {} points gave no summary; their logs are {}\n", t.errors, logs);
    return kExitViolation;
  }
  if (t.violations > 0) {
    fmt::print(stderr, "railcheck: {} points found a violation; each row's point id and seed replay it\n",
               t.violations);
    return kExitViolation;
  }
  return kExitOk;
}

}  // namespace

int cmd_sweep(const SweepOptions& o) {
  auto spec = sweep::load_sweep_file(o.sweep_file);
  if (!spec) {
    fmt::print(stderr, "railcheck: {}\n", spec.error().message());
    return kExitBadInput;
  }
  sweep::SweepConfig cfg;
  cfg.out_dir = o.out.empty() ? "sweep-results/" + spec->name : o.out;
  const bool under_mpi = sweep::started_by_mpirun();
  cfg.jobs = o.jobs.value_or(sweep::cores_per_rank());
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

  if (under_mpi) {
    if (!o.shard.empty()) {
      fmt::print(stderr, "railcheck: --shard and mpirun both pick shards (under mpirun, rank K runs shard K/N)\n");
      return kExitBadInput;
    }
    auto mpi = sweep::run_sweep_mpi(spec.value(), cfg);
    if (!mpi) {
      fmt::print(stderr, "railcheck: {}\n", mpi.error().message());
      return kExitBadInput;
    }
    if (mpi->rank != 0) return mpi->tally.errors + mpi->tally.violations > 0 ? kExitViolation : kExitOk;
    fmt::print("mpirun: {} ranks ran shards K/{} in {}/rank-K; rank 0 merged {} rows\n", mpi->ranks, mpi->ranks,
               cfg.out_dir, mpi->merged);
    return summarize(spec->name, mpi->tally, fmt::format(" over {} ranks", mpi->ranks), cfg.out_dir,
                     cfg.out_dir + "/rank-*/points/p*.log");
  }
  auto tally = sweep::run_sweep(spec.value(), cfg);
  if (!tally) {
    fmt::print(stderr, "railcheck: {}\n", tally.error().message());
    return kExitBadInput;
  }
  return summarize(spec->name, tally.value(), o.shard.empty() ? "" : " in this shard", cfg.out_dir,
                   cfg.out_dir + "/points/p*.log");
}

}  // namespace railcheck::cli
