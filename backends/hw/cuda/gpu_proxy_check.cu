// GPU test of the host-proxy path (CTest: cuda_host_proxy_gpu; exit 77 = no GPU, skipped).
// A GPU thread posts descriptors, the proxy writes and counts, the GPU sees its flag and then
// checks that every stamped write really landed; under reordering, ring wraparound and a ring
// smaller than one transfer (backpressure); writes from the source buffer (above the inline
// limit, one fence per transfer) and inline ones (every payload byte checked).
#include <cstdio>
#include <string>
#include <vector>

#include "backends/hw/cuda/gpu_proxy_run.cuh"

using namespace railcheck::hw::cuda;

int main() {
  std::string why;
  if (gpu_count(&why) == 0) {
    std::printf("SKIP: no GPU (%s)\n", why.c_str());
    return 77;
  }
  struct Case {
    std::string name;
    ProxyRunConfig cfg;
  };
  std::vector<Case> cases = {
      {"one write per transfer, in order", {2000, 1, 256, 256, 1, 1}},
      {"4 writes per transfer, landings shuffled (seed 11)", {2000, 4, 256, 256, 11, 4}},
      {"16 writes per transfer through an 8-slot ring (seed 5)", {500, 16, 128, 8, 5, 8}},
      {"zero-length writes (imm only)", {500, 3, 0, 16, 3, 3}},
      {"inline 64 B, one write per transfer", {2000, 1, 64, 256, 1, 1}},
      {"inline 64 B, 4 writes per transfer, landings shuffled (seed 13)", {2000, 4, 64, 256, 13, 4}},
  };
  // Inline descriptors of 1, 2 and 3 slots and at each slot boundary, 3 to a transfer through an
  // 8-slot ring (wraparound mid-descriptor, backpressure mid-transfer); every byte checked.
  for (std::uint32_t len : {1u, 7u, 8u, 26u, 27u, 61u, 74u, 75u, 121u, SlotCodec::kInlineMax})
    cases.push_back({"inline " + std::to_string(len) + " B, 3 writes per transfer, 8-slot ring (seed 17)",
                     {300, 3, len, 8, 17, 3}});
  int failed = 0;
  for (const auto& c : cases) {
    ProxyRun run = run_proxy_round_trip(c.cfg);
    std::uint64_t want_desc = std::uint64_t(c.cfg.iterations) * c.cfg.writes_per_transfer;
    bool ok = !run.error && run.stamp_errors == 0 && run.stats.descriptors == want_desc &&
              run.stats.landed == want_desc && run.stats.flags_raised == c.cfg.iterations;
    std::printf("%s %s: descriptors %llu/%llu, landed %llu, flags %llu/%u, stamps missing %u%s%s\n",
                ok ? "PASS" : "FAIL", c.name.c_str(), (unsigned long long)run.stats.descriptors,
                (unsigned long long)want_desc, (unsigned long long)run.stats.landed,
                (unsigned long long)run.stats.flags_raised, c.cfg.iterations, run.stamp_errors,
                run.error ? ", error: " : "", run.error.value_or("").c_str());
    if (!ok) {
      std::printf("  replay: seed %llu\n", (unsigned long long)c.cfg.seed);
      ++failed;
    }
  }
  return failed ? 1 : 0;
}
