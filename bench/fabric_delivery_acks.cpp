// What the delivery acks cost (docs/hardware.md, "RC completion semantics"). On tcp;ofi_rxm a
// send's success waits for the receiver's acknowledgement of the message, as on RC for the ACK;
// without it a failover can lose messages the sender saw complete. Same FabricConnection pair,
// same messages, acks on and off, side by side in one run:
//   rate:     `window` sends and as many receives kept posted; messages/s until all completed
//             at both ends
//   latency:  one message at a time, isend to the sender's completion (what NCCL waits for
//             before it reuses a buffer), mean
// Both connections live in this process on loopback, driven from one thread, so each figure
// includes the other side's polling. Each run starts with 32 untimed messages.
//   build/bench/fabric_delivery_acks [--quick]
#include <fmt/format.h>
#include <rdma/fabric.h>

#include <cstring>
#include <string>
#include <vector>

#include "backends/hw/libfabric/provider_query.hpp"
#include "bench/machine_line.hpp"
#include "bench/message_pair.hpp"
#include "bench/quick_flag.hpp"

using namespace railcheck;
using bench::Figures;
using bench::Load;

namespace {

const std::string kProvider = "tcp;ofi_rxm";

Figures run(bool acks, const Load& l) {
  FabricOptions o;
  o.provider = kProvider;
  o.rails = 2;
  o.rail_addresses.assign(2, "127.0.0.1");
  o.delivery_acks = acks;
  bench::FabricPair p;
  if (auto ok = p.open(o, l.size); !ok) return {0, 0, ok.error().message()};
  return bench::measure(p, l);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick =
      bench::quick_flag(argc, argv, "Two-sided sends with and without delivery acks, shm and tcp;ofi_rxm.");
  fmt::print("fabric_delivery_acks: {} | libfabric {}.{} | {}\n", bench::machine_summary(), FI_MAJOR(fi_version()),
             FI_MINOR(fi_version()), kProvider);
  fmt::print("both connections in one process on loopback, one thread; latency = isend to the sender's completion\n\n");
  if (auto ok = fabric::query_provider(kProvider, "127.0.0.1"); !ok) {
    fmt::print("{} is not usable here: {}\n", kProvider, ok.error().message());
    return 1;
  }
  const std::uint64_t q = quick ? 10 : 1;
  const std::vector<Load> loads = {
      {64, 20000 / q, 64, 2000 / q},
      {4096, 10000 / q, 64, 1000 / q},
      {64 << 10, 2000 / q, 16, 500 / q},
  };
  fmt::print(
      "| size | msgs/s, no acks | msgs/s, acks | acks/none | lat us, no acks | lat us, acks | acks/none |\n"
      "|---|---|---|---|---|---|---|\n");
  int rc = 0;
  for (const Load& l : loads) {
    const Figures off = run(false, l);
    const Figures on = run(true, l);
    const std::string label = l.size >= 1024 ? fmt::format("{} KiB", l.size >> 10) : fmt::format("{} B", l.size);
    if (!off.error.empty() || !on.error.empty()) {
      fmt::print("| {} | failed: {} {} |\n", label, off.error, on.error);
      rc = 1;
      continue;
    }
    fmt::print("| {} | {:.0f} | {:.0f} | {:.2f} | {:.1f} | {:.1f} | {:.2f} |\n", label, off.msgs_per_s, on.msgs_per_s,
               on.msgs_per_s / off.msgs_per_s, off.lat_us, on.lat_us, on.lat_us / off.lat_us);
    std::fflush(stdout);
  }
  return rc;
}
