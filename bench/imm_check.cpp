// Benchmark (not a test): the exhaustive ImmCounter check over every fate and arrival order,
// per replay policy and write count: schedules explored, violations found, and the rate.
// Usage: imm_check [max_writes]   (default 4, the enumerator's limit)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/machine_line.hpp"
#include "verify/imm/arrival_enumerator.hpp"

using namespace railcheck;
using namespace railcheck::imm;

int main(int argc, char** argv) {
  const auto max_writes = static_cast<std::uint32_t>(argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4);
  bench::print_machine_line();
  std::printf("%-7s %6s %12s %10s %10s %10s %8s %12s\n", "policy", "writes", "schedules", "once", "after_all", "double",
              "wall_s", "sched/s");
  for (ReplayPolicy policy : {ReplayPolicy::Naive, ReplayPolicy::Probe, ReplayPolicy::Resync})
    for (std::uint32_t n = 1; n <= max_writes; ++n) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = check_every_order({n, policy, true});
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!r) {
        std::fprintf(stderr, "%s\n", r.error().message().c_str());
        return 2;
      }
      const auto& f = r->findings;
      std::printf("%-7s %6u %12llu %10llu %10llu %10llu %8.2f %12.0f\n", std::string(to_string(policy)).c_str(), n,
                  static_cast<unsigned long long>(r->schedules), static_cast<unsigned long long>(f[0].schedules),
                  static_cast<unsigned long long>(f[1].schedules), static_cast<unsigned long long>(f[2].schedules),
                  wall, static_cast<double>(r->schedules) / wall);
      std::fflush(stdout);
    }
}
