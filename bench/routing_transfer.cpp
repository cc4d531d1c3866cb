// Benchmark (not a test): simulated weight-transfer time against the ideal bound (total bytes /
// aggregate NIC bandwidth of the smaller side) for the seed's two deployments, and the wall
// and CPU time the simulation takes. Each spec runs as shipped (one task per tensor, one queue
// pair per trainer-rollout pair), with every write its own flow (write_queues = "per-write", the
// model before 2026-11-25), with 256 MiB batches, and with a 4 GiB memory cap, per tensor and
// batched; the Qwen3 spec also runs with larger per-tensor host overheads, to see what it takes
// to reach the seed's measured 2 s. (Per write with a 4 GiB cap is left out: over an hour.)
// Usage, from the repository root: routing_transfer [spec ...] (default: the shipped weight specs)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/sim/routing/route_spec.hpp"
#include "bench/machine_line.hpp"
#include "engine/routing/weight_transfer_plan.hpp"

using namespace railcheck;
using namespace railcheck::sim;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void run(const WeightsSpec& s, const PipelineParams& p, const char* label) {
  const auto plan = routing::plan_weight_transfer(s.model, s.trainer, s.rollout, s.table_order).value();
  const auto& table = plan.table;
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  const auto res = simulate_weight_transfer({plan.trainer, plan.rollout, plan.mappings, table}, s.fabric, p);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - c0;
  std::printf("%-22s %-28s %8.1f %8.3f %8.3f %6.2f %8.3f %8.3f %8.3f %8llu %8.1f %8.1f\n", s.name.c_str(), label,
              static_cast<double>(table.total_bytes) / 1e9, res.total_s, res.ideal_s, res.total_s / res.ideal_s,
              res.mean_stage.cap_wait, res.mean_stage.gather, res.mean_stage.gpu_ops,
              static_cast<unsigned long long>(res.tasks), wall, cpu);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> specs(argv + 1, argv + argc);
  if (specs.empty())
    specs = {"scenarios/routing/qwen3-235b-128-to-32.toml", "scenarios/routing/kimi-k2-256-to-128.toml"};
  bench::print_machine_line();
  std::printf("%-22s %-28s %8s %8s %8s %6s %8s %8s %8s %8s %8s %8s\n", "spec", "variant", "GB", "sim_s", "ideal_s",
              "gap", "capwait", "gather", "gpu_ops", "tasks", "wall_s", "cpu_s");
  for (const std::string& path : specs) {
    auto spec = load_weights_spec(path);
    if (!spec) {
      std::fprintf(stderr, "%s\n", spec.error().message().c_str());
      return 2;
    }
    const WeightsSpec& s = spec.value();
    run(s, s.pipeline, "as shipped");
    WeightsSpec before = s;  // issue 34's plan decisions undone
    before.table_order = routing::TableOrder::Model;
    before.pipeline.release_gathered = false;
    before.pipeline.prefetch_h2d = false;
    before.pipeline.group_barrier = true;
    run(before, before.pipeline, "plan before issue 34");
    PipelineParams per_write = s.pipeline;
    per_write.write_queues = WriteQueues::PerWrite;
    run(s, per_write, "per write (before 11-25)");
    PipelineParams batched = s.pipeline;
    batched.batch_bytes = 256ull << 20;
    run(s, batched, "batch 256 MiB");
    PipelineParams roomy = s.pipeline;
    roomy.max_tmp_bytes = 4ull << 30;
    run(s, roomy, "tmp cap 4 GiB");
    roomy.batch_bytes = 256ull << 20;
    run(s, roomy, "tmp cap 4 GiB + batch 256 MiB");
    if (s.model.name != "qwen3-235b-a22b") continue;
    for (int overhead_us : {500, 1000, 2000}) {
      PipelineParams slow = s.pipeline;
      slow.gpu_op_overhead = us(overhead_us);
      run(s, slow, ("gpu op overhead " + std::to_string(overhead_us) + " us").c_str());
    }
  }
  return 0;
}
