// Benchmark (not a test): how long the controller takes to build a weight-transfer routing
// table from parameter metadata, per shipped model, at the seed's deployment sizes. Prints the
// median of N runs of each step. Usage: routing_table_build [runs=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/machine_line.hpp"
#include "engine/routing/model_layout.hpp"
#include "engine/routing/weight_routing_table.hpp"

using namespace railcheck::routing;

namespace {

struct Case {
  const char* model;
  TrainerParallelism trainer;
  RolloutParallelism rollout;
};

template <typename F>
double median_seconds(int runs, F&& body) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  railcheck::bench::print_machine_line();
  const Case cases[] = {
      {"qwen3-235b-a22b", {.pp = 4, .fsdp = 4, .ep = 8}, {.replicas = 4, .gpus_per_replica = 8, .dtype = DType::FP8}},
      {"deepseek-v3", {.pp = 8, .fsdp = 4, .ep = 8}, {.replicas = 8, .gpus_per_replica = 16, .dtype = DType::FP8}},
      {"kimi-k2", {.pp = 8, .fsdp = 4, .ep = 8}, {.replicas = 8, .gpus_per_replica = 16, .dtype = DType::FP8}},
  };
  std::printf("%-16s %8s %8s %9s %9s %10s %10s %10s %10s\n", "model", "trainers", "rollouts", "mappings", "writes",
              "metadata_s", "match_s", "table_s", "total_s");
  for (const Case& c : cases) {
    const ModelConfig cfg = *find_model_config(c.model);
    TrainerMetadata t;
    RolloutMetadata r;
    const double meta_s = median_seconds(runs, [&] {
      t = trainer_metadata(cfg, c.trainer).value();
      r = rollout_metadata(cfg, c.rollout).value();
    });
    std::vector<WeightMapping> m;
    const double match_s = median_seconds(runs, [&] { m = match_weights(t, r, model_rules(cfg)).value(); });
    WeightRoutingTable table;
    const double table_s = median_seconds(runs, [&] { table = build_routing_table(t, r, m); });
    std::printf("%-16s %8u %8zu %9zu %9llu %10.3f %10.3f %10.3f %10.3f\n", c.model, t.ranks, r.gpus.size(), m.size(),
                static_cast<unsigned long long>(table.writes), meta_s, match_s, table_s, match_s + table_s);
  }
  return 0;
}
