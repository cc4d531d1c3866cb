// GPU-observed latency of one network write through the host proxy, against its floor: a plain
// GPU -> CPU -> GPU round trip through mapped pinned memory (seed: ~2 us one way over PCIe).
// Built only where nvcc exists (target cuda_host_proxy_bench, backends/hw/cuda/CMakeLists.txt).
// Usage: cuda_host_proxy_bench [iterations] [json-out]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "backends/hw/cuda/gpu_proxy_run.cuh"

using namespace railcheck::hw::cuda;

namespace {
struct Summary {
  double median_us = 0, p99_us = 0, mean_us = 0;
};
Summary summarize(std::vector<std::uint64_t> ns) {
  Summary s;
  if (ns.empty()) return s;
  // Drop the first 5%: first-touch of mapped pages and the proxy thread's wake-up.
  ns.erase(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 20));
  std::sort(ns.begin(), ns.end());
  double sum = 0;
  for (auto v : ns) sum += static_cast<double>(v);
  s.median_us = static_cast<double>(ns[ns.size() / 2]) / 1e3;
  s.p99_us = static_cast<double>(ns[std::min(ns.size() - 1, ns.size() * 99 / 100)]) / 1e3;
  s.mean_us = sum / static_cast<double>(ns.size()) / 1e3;
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  std::uint32_t iters = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 20000;
  std::string json = argc > 2 ? argv[2] : "";
  std::string why;
  if (gpu_count(&why) == 0) {
    std::printf("no GPU: %s (skipped)\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf("cuda_host_proxy_bench: %s, %u iterations per row, %s\n", prop.name, iters, date);

  std::optional<std::string> err;
  Summary floor = summarize(run_ping_pong(iters, &err));
  if (err) {
    std::printf("ping-pong failed: %s\n", err->c_str());
    return 1;
  }
  struct Row {
    const char* name;
    ProxyRunConfig cfg;
  };
  // The 0-byte row is the proxy's own cost: with a NIC the data moves by DMA, while the test
  // double's memcpy reads the GPU-written source from host memory (a cache miss per write).
  std::vector<Row> rows{{"proxy 1 write x 0 B (imm only)", {iters, 1, 0, 256, 1, 1}},
                        {"proxy 1 write x 64 B", {iters, 1, 64, 256, 1, 1}},
                        {"proxy 4 writes x 64 B, shuffled", {iters, 4, 64, 256, 7, 4}},
                        {"proxy 1 write x 64 KiB", {iters, 1, 65536, 256, 1, 1}}};
  std::printf("%-36s %10s %10s %10s %12s %14s\n", "path", "median us", "p99 us", "mean us", "over floor",
              "over floor us");
  std::printf("%-36s %10.2f %10.2f %10.2f %12s %14s\n", "floor: mapped-memory ping-pong", floor.median_us, floor.p99_us,
              floor.mean_us, "-", "-");
  std::string rows_json;
  int rc = 0;
  for (const auto& r : rows) {
    ProxyRun run = run_proxy_round_trip(r.cfg);
    if (run.error || run.stamp_errors) {
      std::printf("%-36s FAILED: %s, %u stamps missing\n", r.name, run.error.value_or("").c_str(), run.stamp_errors);
      rc = 1;
      continue;
    }
    Summary s = summarize(run.round_trip_ns);
    std::printf("%-36s %10.2f %10.2f %10.2f %10.2fx %+14.2f\n", r.name, s.median_us, s.p99_us, s.mean_us,
                s.median_us / floor.median_us, s.median_us - floor.median_us);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s{\"path\":\"%s\",\"median_us\":%.3f,\"p99_us\":%.3f,\"mean_us\":%.3f,\"issuer\":\"%s\"}",
                  rows_json.empty() ? "" : ",", r.name, s.median_us, s.p99_us, s.mean_us, run.issuer.c_str());
    rows_json += buf;
  }
  std::printf("issuer: in-process copy (test double, no NIC): the rows measure the GPU<->proxy path, not a network\n");
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"gpu\":\"" << prop.name << "\",\"date\":\"" << date << "\",\"iterations\":" << iters
        << ",\"floor\":{\"median_us\":" << floor.median_us << ",\"p99_us\":" << floor.p99_us
        << ",\"mean_us\":" << floor.mean_us << "},\"rows\":[" << rows_json << "]}\n";
  }
  return rc;
}
