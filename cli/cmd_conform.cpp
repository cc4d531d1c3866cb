// railcheck conform: the hardware conformance suite (backends/hw/conform, docs/hardware.md).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/hw/conform/conform_suite.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "backends/hw/verbs/verbs_probe.hpp"
#include "cli/commands.hpp"

namespace railcheck::cli {
namespace {

int conform_verbs() {
  auto devices = hw::verbs::probe_verbs();
  if (!devices || devices->empty()) {
    std::fprintf(stderr, "railcheck conform: %s; the verbs suite is skipped\n", hw::verbs::kNoDeviceMessage);
    return hw::verbs::kExitSkipped;
  }
  std::fprintf(stderr,
               "railcheck conform: %zu RDMA device(s) found, but the verbs suite is not part of this build; "
               "run --transport fabric (with --provider efa or verbs;ofi_rxm)\n",
               devices->size());
  return kExitBadInput;
}

}  // namespace

int cmd_conform(const ConformOptions& o) {
  if (o.peer_fd) {
    conform::PeerOptions p;
    p.fd = *o.peer_fd;
    p.provider = o.provider;
    p.rail_addresses = o.peer_rails;
    p.cut_link = o.cut_link;
    return conform::run_peer(p);
  }
  if (o.transport == "verbs") return conform_verbs();
  if (o.transport != "fabric") {
    std::fprintf(stderr, "railcheck conform: unknown --transport '%s' (fabric or verbs)\n", o.transport.c_str());
    return kExitBadInput;
  }
  conform::SuiteOptions so;
  so.provider = o.provider;
  so.sizes = o.sizes;
  so.seed = o.seed;
  // The lab is built before anything touches libfabric (`ip` runs as a child process), and
  // taken down when this function returns, whatever the outcome.
  std::unique_ptr<conform::NetnsLab> lab;
  if (o.netns && fabric::is_shm(o.provider)) {
    std::fprintf(stderr, "railcheck conform: --netns needs a network provider: shm never leaves this machine's memory "
                         "(use --provider 'tcp;ofi_rxm')\n");
    return kExitBadInput;
  }
  if (o.netns) {
    auto made = conform::NetnsLab::create(conform::default_netns_prefix());
    if (!made) {
      std::fprintf(stderr, "railcheck conform: network namespaces are not available here: %s; skipped\n",
                   made.error().message().c_str());
      return hw::verbs::kExitSkipped;
    }
    lab = std::move(made).value();
    so.netns = lab.get();
  }
  // rxm as the plugin runs it (run_suite sets it too; set here first, so the line printed says
  // whether the size is the plugin's or the environment's): at rxm's default the tcp;ofi_rxm suite
  // spent half its time zeroing receive buffers (42.7 -> 21.4 s under ASan, 2026-11-29).
  const std::string rxm_line = fabric::size_rxm_like_the_plugin(o.provider);
  const auto t0 = std::chrono::steady_clock::now();
  auto results = conform::run_suite(so);
  if (!results) {
    std::fprintf(stderr, "railcheck conform: %s\n", results.error().message().c_str());
    return kExitBadInput;
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::size_t failed = 0;
  fmt::print("railcheck conform --transport fabric --provider {} (two processes, {}, seed {})\n", o.provider,
             lab ? fmt::format("network namespaces {} and {}", lab->side(0).netns, lab->side(1).netns) : "loopback",
             o.seed);
  if (!rxm_line.empty()) fmt::print("{}\n", rxm_line);
  std::size_t width = 4;
  for (const auto& r : results.value()) width = std::max(width, r.name.size());
  fmt::print("{:<{}} {:>6} {:>11}  {}\n", "case", width, "result", "time", "detail");
  for (const auto& r : results.value()) {
    failed += r.passed ? 0 : 1;
    fmt::print("{:<{}} {:>6} {:>8.1f} ms  {}\n", r.name, width, r.passed ? "PASS" : "FAIL", r.millis, r.detail);
  }
  fmt::print("{} of {} cases passed in {:.1f} s\n", results->size() - failed, results->size(), total);
  if (!o.json_path.empty()) {
    nlohmann::json j;
    j["transport"] = "fabric";
    j["provider"] = o.provider;
    j["netns"] = lab != nullptr;
    j["seed"] = o.seed;
    j["passed"] = failed == 0;
    j["cases"] = nlohmann::json::array();
    for (const auto& r : results.value()) {
      nlohmann::json c;
      c["name"] = r.name;
      c["passed"] = r.passed;
      c["ms"] = r.millis;
      c["detail"] = r.detail;
      j["cases"].push_back(c);
    }
    if (o.json_path == "-") {
      fmt::print("{}\n", j.dump(2));
    } else {
      std::ofstream out(o.json_path);
      out << j.dump(2) << "\n";
      out.close();
      if (out.fail()) {
        std::fprintf(stderr, "railcheck conform: could not write %s\n", o.json_path.c_str());
        return kExitBadInput;
      }
    }
  }
  return failed == 0 ? kExitOk : kExitViolation;
}

}  // namespace railcheck::cli
