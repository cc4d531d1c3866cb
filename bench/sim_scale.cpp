// Benchmark (not a test): wall time and event rate of a large simulated run — by default 1024
// ranks x 8 rails, 8 channels per direction (one per rail), 2 paths per connection, and rank
// 0's rail-0 link dying for good mid-stream.
// Usage: sim_scale [ranks] [rails] [messages] [heartbeat_ms] [mailbox|event|sendto]
// Prints the machine line, the run's figures, and the process's CPU seconds (user + sys) and
// peak resident memory from getrusage: on a shared host the CPU time, not the wall time, is the
// figure to compare.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

#include "backends/sim/sim_run.hpp"
#include "bench/machine_line.hpp"

using namespace railcheck;

namespace {

// The one-minute load average when the run ends (how shared the machine was), or -1.
double load_average() {
  double load[1] = {-1};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

}  // namespace

int main(int argc, char** argv) {
  bench::print_machine_line();
  Scenario sc;
  sc.name = "bench-scale";
  sc.topology.ranks = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 1024;
  sc.topology.rails = argc > 2 ? static_cast<std::uint32_t>(std::atoi(argv[2])) : 8;
  sc.topology.paths_per_conn = 2;
  sc.topology.nic = *find_nic_preset("cx7-400g");
  sc.workload.messages = argc > 3 ? static_cast<std::uint32_t>(std::atoi(argv[3])) : 16;
  sc.workload.message_bytes = 4 << 20;
  sc.workload.window = 4;
  sc.workload.channels = sc.topology.rails;
  sc.faults.downs.push_back(LinkDown{LinkRef{0, 0}, us(200), std::nullopt});
  sc.time_limit = sec(30);
  if (argc > 4 && std::atoi(argv[4]) > 0) sc.engine.heartbeat_interval = ms(std::atoi(argv[4]));
  const auto wire = argc > 5 ? sim::parse_wire_mode(argv[5]) : sim::kDefaultWire;
  if (!wire) {
    std::fprintf(stderr, "sim_scale: wire %s: expected mailbox, event or sendto\n", argv[5]);
    return 2;
  }

  const auto out = sim::run_scenario(
      sc, 1,
      [](Nanos t, std::size_t done, std::size_t total, double wall) {
        std::fprintf(stderr, "sim %.3f ms, %zu/%zu connections done, wall %.0f s\n", to_millis(t), done, total, wall);
      },
      *wire);
  const auto& s = out.summary;
  std::printf("ranks=%u rails=%u connections=%u messages=%llu wire=%s\n", sc.topology.ranks, sc.topology.rails,
              s.connections, static_cast<unsigned long long>(s.messages_expected),
              std::string(sim::to_string(*wire)).c_str());
  std::printf("outcome=%s failovers=%u replayed=%llu sim_time_ms=%.3f\n", std::string(to_string(s.outcome)).c_str(),
              s.failovers, static_cast<unsigned long long>(s.wrs_replayed), to_millis(s.end_time));
  std::printf("wall_s=%.3f engine_events=%llu events_per_s=%.0f data_packets=%llu\n", s.wall_seconds,
              static_cast<unsigned long long>(s.counters.events),
              static_cast<double>(s.counters.events) / s.wall_seconds,
              static_cast<unsigned long long>(s.counters.data_packets));
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double user = static_cast<double>(u.ru_utime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec) * 1e-6;
  const double sys = static_cast<double>(u.ru_stime.tv_sec) + static_cast<double>(u.ru_stime.tv_usec) * 1e-6;
  // ru_maxrss is in KiB on Linux.
  std::printf("cpu_user_s=%.2f cpu_sys_s=%.2f max_rss_mb=%.0f load_1min=%.2f\n", user, sys,
              static_cast<double>(u.ru_maxrss) / 1024.0, load_average());
  return s.outcome == sim::RunOutcome::Delivered ? 0 : 1;
}
