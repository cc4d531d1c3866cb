// GPU-observed latency of one network write through the host proxy, against its floor: a plain
// GPU -> CPU -> GPU round trip through mapped pinned memory (seed: ~2 us one way over PCIe).
// Built only where nvcc exists (target cuda_host_proxy_bench, backends/hw/cuda/CMakeLists.txt).
// Usage: cuda_host_proxy_bench [iterations] [json-out]
// Prints two tables: the round trips (median, p99, mean, over the floor), then where each row's
// median goes (issue 32): the GPU's %globaltimer after publishing and after its wait before the
// first flag poll, the polls a round trip took, and the proxy's own time from popping a transfer's
// descriptor to raising its flag (host clock, from a second, traced run of the row).
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
// Drop the first 5%: first-touch of mapped pages and the proxy thread's wake-up.
template <typename T>
std::vector<T> steady(const std::vector<T>& v) {
  return {v.begin() + static_cast<std::ptrdiff_t>(v.size() / 20), v.end()};
}
Summary summarize(const std::vector<std::uint64_t>& all) {
  Summary s;
  std::vector<std::uint64_t> ns = steady(all);
  if (ns.empty()) return s;
  std::sort(ns.begin(), ns.end());
  double sum = 0;
  for (auto v : ns) sum += static_cast<double>(v);
  s.median_us = static_cast<double>(ns[ns.size() / 2]) / 1e3;
  s.p99_us = static_cast<double>(ns[std::min(ns.size() - 1, ns.size() * 99 / 100)]) / 1e3;
  s.mean_us = sum / static_cast<double>(ns.size()) / 1e3;
  return s;
}
template <typename T, typename F>
double quantile_of(const std::vector<T>& all, F f, double q) {
  std::vector<double> v;
  for (const auto& x : steady(all)) v.push_back(f(x));
  if (v.empty()) return 0;
  const auto at = std::min(v.size() - 1, static_cast<std::size_t>(static_cast<double>(v.size()) * q));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
  return v[at];
}

// Medians, then the same phases at p99 (each phase's own p99, so where a slow round trip's time
// goes: the GPU's publishing, more polls, or the proxy).
void print_phases(const char* name, const ProxyRun& run, const std::vector<std::uint32_t>& service_ns) {
  using P = RoundTripPhases;
  const auto phases = steady(run.phases);
  const double one_poll =
      static_cast<double>(std::count_if(phases.begin(), phases.end(), [](const P& p) { return p.polls == 1; })) /
      static_cast<double>(std::max<std::size_t>(1, phases.size()));
  auto at = [&](double q, auto f) { return quantile_of(run.phases, f, q); };
  auto proxy = [&](double q) {
    return service_ns.empty() ? std::string("-")
                              : std::to_string(int(quantile_of(
                                    service_ns, [](std::uint32_t v) { return double(v); }, q)));
  };
  const auto publish = [](const P& p) { return double(p.published_ns); };
  const auto wait = [](const P& p) { return double(p.polling_from_ns - p.published_ns); };
  const auto poll = [](const P& p) { return double(p.seen_ns - p.polling_from_ns); };
  const auto polls = [](const P& p) { return double(p.polls); };
  std::printf("%-36s %10.2f %10.2f %10.2f %7.0f %9.0f%% %12s | p99: %7.2f %7.2f %7.2f %5.0f %9s\n", name,
              at(0.5, publish) / 1e3, at(0.5, wait) / 1e3, at(0.5, poll) / 1e3, at(0.5, polls), 100 * one_poll,
              proxy(0.5).c_str(), at(0.99, publish) / 1e3, at(0.99, wait) / 1e3, at(0.99, poll) / 1e3, at(0.99, polls),
              proxy(0.99).c_str());
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

  ProxyRun floor_run = run_ping_pong(iters);
  if (floor_run.error) {
    std::printf("ping-pong failed: %s\n", floor_run.error->c_str());
    return 1;
  }
  Summary floor = summarize(floor_run.round_trip_ns);
  struct Row {
    const char* name;
    ProxyRunConfig cfg;
  };
  // The 0-byte row is the proxy's own cost: with a NIC the data moves by DMA, while the test
  // double's memcpy reads the GPU-written source from host memory (a cache miss per write).
  // Writes of 1 to SlotCodec::kInlineMax (122) bytes go inline, in 1 (<= 26 B), 2 (<= 74 B)
  // or 3 slots, with no data fence; 128 B, just above the limit, is the fenced path beside them.
  std::vector<Row> rows{{"proxy 1 write x 0 B (imm only)", {iters, 1, 0, 256, 1, 1}},
                        {"proxy 1 write x 8 B", {iters, 1, 8, 256, 1, 1}},
                        {"proxy 1 write x 64 B", {iters, 1, 64, 256, 1, 1}},
                        {"proxy 1 write x 122 B", {iters, 1, 122, 256, 1, 1}},
                        {"proxy 1 write x 128 B", {iters, 1, 128, 256, 1, 1}},
                        {"proxy 4 writes x 64 B, shuffled", {iters, 4, 64, 256, 7, 4}},
                        {"proxy 1 write x 64 KiB", {iters, 1, 65536, 256, 1, 1}}};
  std::printf("%-36s %10s %10s %10s %12s %14s\n", "path", "median us", "p99 us", "mean us", "over floor",
              "over floor us");
  std::printf("%-36s %10.2f %10.2f %10.2f %12s %14s\n", "floor: mapped-memory ping-pong", floor.median_us, floor.p99_us,
              floor.mean_us, "-", "-");
  std::string rows_json;
  std::vector<ProxyRun> runs;
  int rc = 0;
  for (const auto& r : rows) {
    runs.push_back(run_proxy_round_trip(r.cfg));
    const ProxyRun& run = runs.back();
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

  std::printf(
      "\nphases (medians, then each phase's p99; GPU clock from the iteration's start, proxy clock for proxy)\n");
  std::printf("%-36s %10s %10s %10s %7s %10s %12s | p99: %7s %7s %7s %5s %9s\n", "path", "publish us", "wait us",
              "poll us", "polls", "1 poll", "proxy ns", "publish", "wait", "poll", "polls", "proxy ns");
  print_phases("floor: mapped-memory ping-pong", floor_run, {});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (runs[i].error) continue;
    ProxyRunConfig traced = rows[i].cfg;
    traced.trace_proxy = true;
    ProxyRun t = run_proxy_round_trip(traced);
    print_phases(rows[i].name, runs[i], t.error ? std::vector<std::uint32_t>{} : t.service_ns);
  }
  std::printf(
      "publish: stamps, their fence and the slot stores (inline, 1-122 B: the slot stores only; the floor: the\n"
      "ping store); wait: the fence before the first flag poll; poll: the polls (each a PCIe read round trip);\n"
      "proxy: descriptor popped -> flag raised\n");

  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"gpu\":\"" << prop.name << "\",\"date\":\"" << date << "\",\"iterations\":" << iters
        << ",\"floor\":{\"median_us\":" << floor.median_us << ",\"p99_us\":" << floor.p99_us
        << ",\"mean_us\":" << floor.mean_us << "},\"rows\":[" << rows_json << "]}\n";
  }
  return rc;
}
