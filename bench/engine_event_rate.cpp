// Benchmark (not a test): how many events per second the engine handles on its own, with no
// network model in the way — a stream through a PairWorld, one failover in the middle.
// Prints one line per policy; see docs/benchmarks.md for recorded figures.
#include <chrono>
#include <cstdio>

#include "verify/pair_world.hpp"

using namespace railcheck;

int main(int argc, char** argv) {
  const std::uint64_t messages = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  std::printf("%-8s %12s %12s %14s\n", "policy", "messages", "wall_s", "msgs_per_s");
  for (ReplayPolicy p : {ReplayPolicy::Naive, ReplayPolicy::Probe, ReplayPolicy::Resync}) {
    HaTunables t;
    t.replay = p;
    t.heartbeat_interval = sec(3600);
    verify::PairWorld w(t, 2);
    w.handshake();
    const auto t0 = std::chrono::steady_clock::now();
    constexpr std::uint64_t kWindow = 64;
    std::uint64_t posted = 0;
    while (w.sends_completed() < messages && !w.sender().failed()) {
      while (posted < messages && posted - w.sends_completed() < kWindow) {
        w.irecv(posted);
        w.isend(posted);
        ++posted;
      }
      if (posted == messages / 2 && w.sender().failovers() == 0) w.kill_path(0);
      w.run(ms(1));
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-8s %12llu %12.3f %14.0f\n", std::string(to_string(p)).c_str(),
                static_cast<unsigned long long>(w.sends_completed()), wall,
                static_cast<double>(w.sends_completed()) / wall);
  }
  return 0;
}
