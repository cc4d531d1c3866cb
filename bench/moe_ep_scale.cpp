// Benchmark (not a test): what `railcheck route moe` costs as the EP size grows. DeepSeek-V3 on
// the shipped decode spec's fabric, 16 tokens per rank (DeepEP's decode scale), EP 64, 128 and
// 256: messages per phase, simulated times, and the wall and CPU time of the simulation, flat and
// hierarchical, with the fluid solver (moe_fluid.hpp, `route moe`'s default) and on SimGrid's
// engine with network/optim:Full (`route moe --simgrid`). Before issue 34 the cost grew about as
// the cube of the EP size (docs/routing.md).
// Usage, from the repository root: moe_ep_scale [ep ...] (default: 64 128 256)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "backends/sim/routing/moe_sim.hpp"
#include "backends/sim/routing/route_spec.hpp"
#include "bench/machine_line.hpp"
#include "engine/core/rng.hpp"
#include "engine/routing/moe_assignment.hpp"
#include "engine/routing/moe_tables.hpp"

using namespace railcheck;

// Processor time of the whole process, user and system (this benchmark runs one thread).
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

int main(int argc, char** argv) {
  std::vector<std::uint32_t> eps;
  for (int i = 1; i < argc; ++i) eps.push_back(static_cast<std::uint32_t>(std::strtoul(argv[i], nullptr, 10)));
  if (eps.empty()) eps = {64, 128, 256};
  auto spec = sim::load_moe_spec("scenarios/routing/deepseek-v3-moe-decode.toml");
  if (!spec.ok()) {
    std::fprintf(stderr, "moe_ep_scale: %s (run from the repository root)\n", spec.error().what.c_str());
    return 1;
  }
  const sim::MoeSpec& s = spec.value();
  bench::print_machine_line();
  std::printf("%-4s %-13s %-12s %9s %9s %12s %12s %8s %8s\n", "EP", "scheme", "solver", "disp msgs", "comb msgs",
              "dispatch us", "combine us", "wall s", "cpu s");
  for (const std::uint32_t ep : eps) {
    const routing::MoeCluster cluster{ep, s.fabric.gpus_per_node, static_cast<std::uint32_t>(s.model.experts)};
    SeededRng rng(s.seed);
    auto assignment = routing::draw_token_assignment(s.model, cluster, 16, rng);
    if (!assignment.ok()) {
      std::fprintf(stderr, "moe_ep_scale: EP %u: %s\n", ep, assignment.error().what.c_str());
      return 1;
    }
    for (const auto scheme : {routing::MoeScheme::Flat, routing::MoeScheme::Hierarchical})
      for (const auto solver : {sim::MoeSolver::Fluid, sim::MoeSolver::SimGrid}) {
        const auto tables = routing::build_moe_tables(assignment.value(), cluster, scheme);
        const double cpu0 = cpu_seconds();
        const auto wall0 = std::chrono::steady_clock::now();
        const auto t = sim::simulate_moe(tables, ep, s.fabric, 7392, 14336, solver);
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
        std::printf("%-4u %-13s %-12s %9zu %9zu %12.2f %12.2f %8.2f %8.2f\n", ep,
                    std::string(routing::to_string(scheme)).c_str(),
                    solver == sim::MoeSolver::Fluid ? "fluid" : "simgrid-full", tables.dispatch.messages.size(),
                    tables.combine.messages.size(), t.dispatch_s * 1e6, t.combine_s * 1e6, wall.count(),
                    cpu_seconds() - cpu0);
        std::fflush(stdout);
      }
  }
  return 0;
}
