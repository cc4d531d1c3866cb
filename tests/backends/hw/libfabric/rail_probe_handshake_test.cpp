// How the rail-liveness probe port rides the handshake (backends/hw/libfabric/fabric_rail_probes.cpp):
// on tcp;ofi_rxm the listener's handle names a probe port and the sender runs the detector; a
// handle from a peer that names none (a backend from before issue 28) keeps the detector off and
// the connection works as before; shm carries no port and never runs the detector.
#include <catch2/catch.hpp>
#include <string>

#include "backends/hw/libfabric/tcp_rail_probe.hpp"
#include "engine/handshake/handle_codec.hpp"
#include "stream_fixture.hpp"

using namespace railcheck;
using namespace railcheck::test;

namespace {

constexpr const char* kTcp = "tcp;ofi_rxm";

conform::StreamSpec short_stream() {
  conform::StreamSpec spec;
  spec.seed = 28;
  spec.messages = 64;
  spec.max_size = 2048;
  return spec;
}

}  // namespace

TEST_CASE("rail probe handshake: a tcp listener advertises a probe port and its sender runs the detector",
          "[tcp_probe][handshake]") {
  if (!provider_here(kTcp)) return;
  Pair p = open_pair(loopback_options(kTcp));
  auto decoded = decode_handle(p.handle);
  REQUIRE(decoded.ok());
  CHECK(fabric::probe_port_of(decoded->handle.primary) != 0);
  CHECK(run_stream(p, short_stream()).empty());
  const ConnectionStats tx = p.tx->stats();
  CHECK(tx.liveness);
  CHECK_FALSE(p.rx->stats().liveness);  // only a sender probes
  CHECK(tx.failovers == 0);
}

TEST_CASE("rail probe handshake: a handle that names no probe port keeps the detector off and the stream flows",
          "[tcp_probe][handshake]") {
  if (!provider_here(kTcp)) return;
  const FabricOptions o = loopback_options(kTcp);
  Pair p;
  auto rx = FabricConnection::listen(o, p.handle);
  REQUIRE(rx.ok());
  p.rx = std::move(rx).value();
  // What a backend from before issue 28 sends: the same handle with psn 0.
  auto decoded = decode_handle(p.handle);
  REQUIRE(decoded.ok());
  ConnectionHandle older = decoded->handle;
  older.primary.psn = 0;
  const auto bytes = encode_handle(older);
  p.handle.assign(bytes.begin(), bytes.begin() + kHandleWireSize);
  auto tx = FabricConnection::connect(o, p.handle);
  REQUIRE(tx.ok());
  p.tx = std::move(tx).value();
  CHECK(run_stream(p, short_stream()).empty());
  const ConnectionStats st = p.tx->stats();
  CHECK_FALSE(st.liveness);
  for (const RailStats& r : st.rails) CHECK(r.probes_sent == 0);
}

TEST_CASE("rail probe handshake: shm carries no probe port and never runs the detector", "[tcp_probe][handshake]") {
  if (!provider_here("shm")) return;
  Pair p = open_pair(loopback_options("shm"));
  auto decoded = decode_handle(p.handle);
  REQUIRE(decoded.ok());
  CHECK(fabric::probe_port_of(decoded->handle.primary) == 0);
  CHECK(run_stream(p, short_stream()).empty());
  CHECK_FALSE(p.tx->stats().liveness);
}
