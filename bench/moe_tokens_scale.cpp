// Benchmark (not a test): what `railcheck route moe` costs as the tokens per rank grow at one EP
// size (issue 45: DeepSeek-V3 at EP 256 with DeepEP's 128-token decode batch). The shipped decode
// spec's fabric, seed 1, the fluid solver (`route moe`'s default): messages per phase, simulated
// times, and the wall and CPU time of the simulation, flat and hierarchical. A phase's cost is
// about (events) x (links of its connected set)^2, in vector passes; the events grow with the
// tokens (docs/routing.md).
// Usage, from the repository root: moe_tokens_scale [--ep N] [tokens ...] (default: EP 256; 16 32 64 128)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/resource.h>
#include <string>
#include <vector>

#include "backends/sim/routing/moe_sim.hpp"
#include "backends/sim/routing/route_spec.hpp"
#include "bench/machine_line.hpp"
#include "engine/core/rng.hpp"
#include "engine/routing/moe_assignment.hpp"
#include "engine/routing/moe_tables.hpp"

using namespace railcheck;

// Processor time of the whole process, user and system, from getrusage (this benchmark runs one
// thread; on a shared host this, not the wall time, is the figure to compare).
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int main(int argc, char** argv) {
  std::uint32_t ep = 256;
  std::vector<std::uint32_t> tokens;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ep") == 0 && i + 1 < argc)
      ep = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else
      tokens.push_back(static_cast<std::uint32_t>(std::strtoul(argv[i], nullptr, 10)));
  }
  if (tokens.empty()) tokens = {16, 32, 64, 128};
  auto spec = sim::load_moe_spec("scenarios/routing/deepseek-v3-moe-decode.toml");
  if (!spec.ok()) {
    std::fprintf(stderr, "moe_tokens_scale: %s (run from the repository root)\n", spec.error().what.c_str());
    return 1;
  }
  const sim::MoeSpec& s = spec.value();
  bench::print_machine_line();
  std::printf("%-4s %-6s %-13s %9s %9s %12s %12s %8s %8s\n", "EP", "tokens", "scheme", "disp msgs", "comb msgs",
              "dispatch us", "combine us", "wall s", "cpu s");
  const routing::MoeCluster cluster{ep, s.fabric.gpus_per_node, static_cast<std::uint32_t>(s.model.experts)};
  for (const std::uint32_t t : tokens) {
    SeededRng rng(s.seed);
    auto assignment = routing::draw_token_assignment(s.model, cluster, t, rng);
    if (!assignment.ok()) {
      std::fprintf(stderr, "moe_tokens_scale: EP %u, %u tokens: %s\n", ep, t, assignment.error().what.c_str());
      return 1;
    }
    double wall_sum = 0, cpu_sum = 0;
    for (const auto scheme : {routing::MoeScheme::Flat, routing::MoeScheme::Hierarchical}) {
      const auto tables = routing::build_moe_tables(assignment.value(), cluster, scheme);
      const double cpu0 = cpu_seconds();
      const auto wall0 = std::chrono::steady_clock::now();
      const auto r = sim::simulate_moe(tables, ep, s.fabric, 7392, 14336);
      const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
      const double cpu = cpu_seconds() - cpu0;
      wall_sum += wall.count();
      cpu_sum += cpu;
      std::printf("%-4u %-6u %-13s %9zu %9zu %12.4f %12.4f %8.2f %8.2f\n", ep, t,
                  std::string(routing::to_string(scheme)).c_str(), tables.dispatch.messages.size(),
                  tables.combine.messages.size(), r.dispatch_s * 1e6, r.combine_s * 1e6, wall.count(), cpu);
      std::fflush(stdout);
    }
    std::printf("%-4u %-6u %-13s %9s %9s %12s %12s %8.2f %8.2f\n", ep, t, "both", "", "", "", "", wall_sum, cpu_sum);
  }
  return 0;
}
