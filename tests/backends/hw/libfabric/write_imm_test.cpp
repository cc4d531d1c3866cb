// FabricConnection::write_imm between two connections in this process, on tcp;ofi_rxm and shm:
// the target counts immediates with ImmCounter (backends/hw/conform/write_imm_case.hpp runs
// the same cases between two processes in `railcheck conform`).
#include <catch2/catch.hpp>

#include "backends/hw/conform/write_imm_case.hpp"
#include "stream_fixture.hpp"
#include "support/fabric_providers.hpp"

using namespace railcheck;
using namespace railcheck::test;

namespace {

using railcheck::test::kLoopbackProviders;

// Empty when the case passed on the pair; else why.
std::string run_write_case(Pair& p, const conform::WriteCaseSpec& spec) {
  conform::WriteReceiver target(*p.rx, spec);
  auto where = target.target();
  if (!where) return "target: " + where.error().message();
  conform::WriteInitiator init(*p.tx, spec, where.value());
  const bool finished = pump(
      [&] {
        init.step();
        target.step();
      },
      [&] { return !init.error().empty() || !target.error().empty() || (init.done() && target.done()); });
  if (!init.error().empty()) return "initiator: " + init.error();
  if (!target.error().empty()) return "target: " + target.error();
  if (!finished) return "timed out with " + std::to_string(target.landed()) + " immediates landed";
  return target.verify();
}

}  // namespace

TEST_CASE("write_imm: every immediate lands exactly once and ImmCounter completes each value once", "[fabric][imm]") {
  for (const char* prov : kLoopbackProviders) {
    DYNAMIC_SECTION(prov) {
      if (!provider_here(prov)) continue;
      auto p = open_pair(loopback_options(prov));
      for (auto kind :
           {conform::WriteCaseKind::Counted, conform::WriteCaseKind::ZeroLength, conform::WriteCaseKind::Sharded}) {
        conform::WriteCaseSpec spec;
        spec.kind = kind;
        spec.seed = 21;
        spec.writes = kind == conform::WriteCaseKind::Sharded ? 16 : 48;
        INFO("case " << conform::to_string(kind) << ", seed " << spec.seed);
        CHECK(run_write_case(p, spec) == "");
      }
      // One-sided writes are invisible to the engine: no failover, no message.
      CHECK(p.tx->stats().failovers == 0);
      CHECK(p.tx->stats().rails.at(0).posted_writes > 0);
    }
  }
}

TEST_CASE("write_imm refuses a buffer outside its region and a rail without a peer", "[fabric][imm]") {
  const char* prov = "tcp;ofi_rxm";
  if (!provider_here(prov)) return;
  auto p = open_pair(loopback_options(prov));
  std::vector<std::uint8_t> buf(64);
  auto mr = p.tx->register_memory(buf.data(), buf.size());
  REQUIRE(mr.ok());
  // Before the handshake the standby rail knows no peer.
  auto early = p.tx->write_imm(PathIndex{1}, buf.data(), 8, mr.value(), 0, 1, 7);
  REQUIRE_FALSE(early.ok());
  CHECK_THAT(early.error().what, Catch::Contains("no usable peer"));
  auto outside = p.tx->write_imm(PathIndex{0}, buf.data() + 60, 8, mr.value(), 0, 1, 7);
  REQUIRE_FALSE(outside.ok());
  CHECK_THAT(outside.error().what, Catch::Contains("outside the 64-byte memory region"));
  auto no_rail = p.tx->remote_key(mr.value(), PathIndex{5});
  REQUIRE_FALSE(no_rail.ok());
  CHECK_THAT(no_rail.error().what, Catch::Contains("rail 5 does not exist"));
  auto past = p.tx->remote_address(mr.value(), PathIndex{0}, 65);
  CHECK_FALSE(past.ok());
}
