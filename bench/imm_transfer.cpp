// Benchmark (not a test): simulated WRITE_IMM transfer time against the ideal bound (bytes /
// aggregate NIC rate + one-way latency) on the ConnectX-7 and EFA presets, RC and SRD side by
// side, for one large byte-sharded write and for a paged KV-cache write; and the wall time of
// each simulation.
// Usage: imm_transfer [seed]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backends/sim/imm/imm_transfer_sim.hpp"
#include "bench/machine_line.hpp"

using namespace railcheck;
using namespace railcheck::sim;

namespace {

void run(ImmTransferSpec spec, ImmTransport transport, const char* shape, std::uint64_t seed) {
  spec.transport = transport;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = simulate_imm_transfer(spec, seed);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r) {
    std::fprintf(stderr, "%s\n", r.error().message().c_str());
    std::exit(2);
  }
  std::printf("%-9s %-4s %-22s %7u %10.3f %10.3f %6.3f %7u %7.2f\n", spec.nic.name.c_str(),
              transport == ImmTransport::Rc ? "rc" : "srd", shape, r->writes, to_millis(r->finished),
              to_millis(r->ideal), to_seconds(r->finished) / to_seconds(r->ideal), r->out_of_order, wall);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  bench::print_machine_line();
  std::printf("# seed %llu\n%-9s %-4s %-22s %7s %10s %10s %6s %7s %7s\n", static_cast<unsigned long long>(seed),
              "preset", "tp", "shape", "writes", "sim_ms", "ideal_ms", "ratio", "ooo", "wall_s");
  for (const char* preset : {"cx7-400g", "efa-100g", "efa-200g"}) {
    for (std::uint64_t mib : {1, 64, 1024}) {
      const std::uint64_t bytes = mib << 20;
      auto spec = preset_transfer(preset, imm::SingleWrite{0, 0, 0, bytes}, imm::Regions{bytes, {bytes}}).value();
      const std::string shape = "single " + std::to_string(mib) + " MiB";
      run(spec, ImmTransport::Rc, shape.c_str(), seed);
      run(spec, ImmTransport::Srd, shape.c_str(), seed);
    }
    // KV cache: 4096 pages of 64 KiB, source pages in order, destination pages reversed.
    imm::PagedWrite kv{0, 64 << 10, {}};
    for (std::uint64_t p = 0; p < 4096; ++p) kv.pages.push_back({p << 16, (4095 - p) << 16});
    auto spec = preset_transfer(preset, kv, imm::Regions{256ull << 20, {256ull << 20}}).value();
    spec.shard_by = imm::ShardBy::Pages;
    for (std::uint32_t window : {16, 64}) {
      spec.send_window = window;
      const std::string shape = "paged 4096x64K win " + std::to_string(window);
      run(spec, ImmTransport::Rc, shape.c_str(), seed);
      run(spec, ImmTransport::Srd, shape.c_str(), seed);
    }
  }
}
