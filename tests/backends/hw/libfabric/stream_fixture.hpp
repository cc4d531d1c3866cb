#pragma once
// Two FabricConnections on loopback, driven from one thread or from two processes.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "backends/hw/conform/message_stream.hpp"
#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/libfabric/provider_query.hpp"

namespace railcheck::test {

inline FabricOptions loopback_options(const std::string& provider, std::uint32_t rails = 2) {
  FabricOptions o;
  o.provider = provider;
  o.rails = rails;
  if (!fabric::is_shm(provider)) o.rail_addresses.assign(rails, "127.0.0.1");
  // Generous timers: CI shares two cores among many processes, and a heartbeat or control
  // answer that is merely late must not fail the connection. A cut rail is reported at once
  // (cut_rail), so no test waits for these.
  o.tunables.soft_rto = std::chrono::milliseconds(2000);
  o.tunables.heartbeat_interval = std::chrono::milliseconds(250);
  o.tunables.heartbeat_misses = 8;
  o.tunables.control_timeout = std::chrono::milliseconds(3000);
  return o;
}

inline bool provider_here(const std::string& provider) {
  auto q = fabric::query_provider(provider, fabric::is_shm(provider) ? "" : "127.0.0.1");
  if (!q) WARN("provider " << provider << " is not usable here: " << q.error().message());
  return q.ok();
}

struct Pair {
  std::unique_ptr<FabricConnection> rx;
  std::unique_ptr<FabricConnection> tx;
  std::vector<std::uint8_t> handle;
};

inline Pair open_pair(const FabricOptions& o) {
  Pair p;
  auto rx = FabricConnection::listen(o, p.handle);
  if (!rx) FAIL("listen: " << rx.error().message());
  p.rx = std::move(rx).value();
  auto tx = FabricConnection::connect(o, p.handle);
  if (!tx) FAIL("connect: " << tx.error().message());
  p.tx = std::move(tx).value();
  return p;
}

template <typename Step, typename Done>
bool pump(Step step, Done done, std::chrono::milliseconds limit = std::chrono::milliseconds(30000)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    step();
  }
  return true;
}

// Runs a whole stream between the pair in this thread; returns "" or what went wrong.
inline std::string run_stream(Pair& p, const conform::StreamSpec& spec) {
  conform::StreamSender tx(*p.tx, spec);
  conform::StreamReceiver rx(*p.rx, spec);
  bool ok = true;
  const bool finished =
      pump([&] { ok = tx.step() && rx.step() && ok; }, [&] { return !ok || (tx.done() && rx.done()); });
  if (!tx.error().empty()) return "sender: " + tx.error();
  if (!rx.error().empty()) return "receiver: " + rx.error();
  if (!finished)
    return "timed out: " + std::to_string(tx.completed()) + " sends completed, " + std::to_string(rx.verified()) +
           " messages verified of " + std::to_string(spec.messages) + " (seed " + std::to_string(spec.seed) + ")";
  return {};
}

}  // namespace railcheck::test
