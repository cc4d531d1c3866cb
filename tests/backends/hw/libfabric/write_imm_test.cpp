// FabricConnection::write_imm between two connections in this process, on tcp;ofi_rxm and shm:
// the target counts immediates with ImmCounter (backends/hw/conform/write_imm_case.hpp runs
// the same cases between two processes in `railcheck conform`).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <set>

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

// A ready pair with `src` registered at the initiator and `dst` at the target, and the target
// region's remote address and key on rail 0.
struct WritePair {
  Pair p;
  MemoryRegion* src = nullptr;
  std::uint64_t base = 0, key = 0;
};

WritePair ready_write_pair(const char* prov, std::vector<std::uint8_t>& src, std::vector<std::uint8_t>& dst) {
  WritePair w{open_pair(loopback_options(prov))};
  Pair& p = w.p;
  REQUIRE(pump([&] { p.tx->progress(), p.rx->progress(); }, [&] { return p.tx->ready() && p.rx->ready(); }));
  auto smr = p.tx->register_memory(src.data(), src.size());
  auto dmr = p.rx->register_memory(dst.data(), dst.size());
  REQUIRE((smr.ok() && dmr.ok()));
  auto base = p.rx->remote_address(dmr.value(), PathIndex{0}, 0);
  auto key = p.rx->remote_key(dmr.value(), PathIndex{0});
  REQUIRE((base.ok() && key.ok()));
  w.src = smr.value();
  w.base = base.value();
  w.key = key.value();
  return w;
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

// completed_writes/landed_imms hand their lists over by swap when the caller's vector is empty
// (issue 32: no per-entry move on the data path) and append otherwise: both must give every
// completion exactly once, after what the caller already held.
TEST_CASE("write_imm completions reach empty and non-empty caller vectors exactly once", "[fabric][imm]") {
  for (const char* prov : kLoopbackProviders) {
    DYNAMIC_SECTION(prov) {
      if (!provider_here(prov)) continue;
      std::vector<std::uint8_t> src(64 * 40, 0x11), dst(64 * 40, 0);
      WritePair w = ready_write_pair(prov, src, dst);
      Pair& p = w.p;
      // `done` starts non-empty (the append path); `landed` starts empty (the swap path) and
      // takes the append path once something landed.
      std::vector<WriteCompletion> done = {WriteCompletion{~0ULL, true, {}}};
      std::vector<std::uint32_t> landed;
      std::set<std::uint64_t> ids;
      for (std::uint32_t i = 0; i < 40; ++i) {
        auto id = p.tx->write_imm(PathIndex{0}, src.data() + 64 * i, 64, w.src, w.base + 64 * i, w.key, 1000 + i);
        REQUIRE(id.ok());
        ids.insert(id.value());
        p.tx->completed_writes(done);
        p.rx->landed_imms(landed);
      }
      REQUIRE(pump(
          [&] {
            p.tx->completed_writes(done);
            p.rx->landed_imms(landed);
          },
          [&] { return done.size() == 41 && landed.size() == 40; }));
      CHECK(done.front().id == ~0ULL);  // what the caller held stays first
      std::set<std::uint64_t> seen;
      for (std::size_t k = 1; k < done.size(); ++k) {
        CHECK(done[k].ok);
        seen.insert(done[k].id);
      }
      CHECK(seen == ids);
      std::sort(landed.begin(), landed.end());
      for (std::uint32_t i = 0; i < 40; ++i) CHECK(landed[i] == 1000 + i);
      CHECK(std::all_of(dst.begin(), dst.end(), [](std::uint8_t b) { return b == 0x11; }));
    }
  }
}

// More writes in flight than the provider's queue takes: refused writes wait, the connection
// learns the room from the refusals and retries within it (fabric_executor.cpp, retry_pending),
// and every write still lands exactly once with its bytes.
TEST_CASE("write_imm with a window beyond the provider's queue lands every write exactly once", "[fabric][imm]") {
  for (const char* prov : kLoopbackProviders) {
    DYNAMIC_SECTION(prov) {
      if (!provider_here(prov)) continue;
      constexpr std::uint32_t kWrites = 3000, kWindow = 600, kSize = 64;
      std::vector<std::uint8_t> src(kSize * kWindow), dst(kSize * kWindow, 0);
      WritePair w = ready_write_pair(prov, src, dst);
      Pair& p = w.p;
      std::vector<WriteCompletion> done;
      std::vector<std::uint32_t> landed;
      std::vector<int> seen(kWrites, 0);
      std::uint32_t posted = 0, completed = 0, arrived = 0;
      const bool finished = pump(
          [&] {
            // Slot i % kWindow is reused only after write i - kWindow completed and landed.
            while (posted < kWrites && posted - std::min(completed, arrived) < kWindow) {
              const std::uint32_t slot = posted % kWindow;
              std::memset(src.data() + kSize * slot, static_cast<int>(posted & 0xff), kSize);
              auto id = p.tx->write_imm(PathIndex{0}, src.data() + kSize * slot, kSize, w.src, w.base + kSize * slot,
                                        w.key, posted);
              REQUIRE(id.ok());
              ++posted;
            }
            done.clear();
            p.tx->completed_writes(done);
            for (const auto& d : done) REQUIRE(d.ok);
            completed += static_cast<std::uint32_t>(done.size());
            landed.clear();
            p.rx->landed_imms(landed);
            for (std::uint32_t imm : landed) {
              REQUIRE(imm < kWrites);
              ++seen[imm];
              const std::uint8_t* at = dst.data() + kSize * (imm % kWindow);
              CHECK(std::all_of(at, at + kSize, [imm](std::uint8_t b) { return b == (imm & 0xff); }));
            }
            arrived += static_cast<std::uint32_t>(landed.size());
          },
          [&] { return completed == kWrites && arrived == kWrites; });
      REQUIRE(finished);
      CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
      INFO("writes that had to wait: " << p.tx->stats().rails.at(0).eagain);
      CHECK(p.tx->stats().failovers == 0);
    }
  }
}
