#include "backends/sim/imm/imm_transfer_sim.hpp"

#include <catch2/catch.hpp>

using namespace railcheck;
using namespace railcheck::sim;

namespace {

constexpr std::uint64_t kBytes = 64ull << 20;

ImmTransferSpec large_write(std::string_view preset) {
  auto spec = preset_transfer(preset, imm::SingleWrite{0, 0, 0, kBytes}, imm::Regions{kBytes, {kBytes}});
  REQUIRE(spec.ok());
  return spec.value();
}

}  // namespace

TEST_CASE("presets: ConnectX-7 is one RC NIC per GPU, EFA 4x100 or 2x200 SRD NICs") {
  CHECK(large_write("cx7-400g").nics_per_gpu == 1);
  CHECK(large_write("cx7-400g").transport == ImmTransport::Rc);
  CHECK(large_write("efa-100g").nics_per_gpu == 4);
  CHECK(large_write("efa-200g").nics_per_gpu == 2);
  CHECK(large_write("efa-200g").transport == ImmTransport::Srd);
  CHECK_FALSE(preset_transfer("ib-800g", imm::SingleWrite{}, imm::Regions{}).ok());
}

TEST_CASE("a large sharded write completes once, after its last byte, within 10% of the NIC bound") {
  for (const char* preset : {"cx7-400g", "efa-100g", "efa-200g"}) {
    INFO(preset << ", seed 7");
    auto r = simulate_imm_transfer(large_write(preset), 7);
    REQUIRE(r.ok());
    // 1 MiB WRITE_IMMs; EFA's 8928-byte MTU leaves one NIC's share a partial MiB at most.
    const auto nics = large_write(preset).nics_per_gpu;
    CHECK(r->writes >= 64);
    CHECK(r->writes <= 64 + nics - 1);
    CHECK(r->shortfalls.empty());
    CHECK(r->finished >= r->ideal);
    CHECK(to_seconds(r->finished) < 1.10 * to_seconds(r->ideal));
  }
}

TEST_CASE("RC lands every QP's writes in order, SRD spraying reorders them") {
  auto rc = large_write("efa-100g");
  rc.transport = ImmTransport::Rc;
  auto srd = large_write("efa-100g");
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    INFO("seed " << seed);
    auto a = simulate_imm_transfer(rc, seed);
    auto b = simulate_imm_transfer(srd, seed);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(b->out_of_order > 0);
    CHECK(a->shortfalls.empty());
    CHECK(b->shortfalls.empty());
    // Spraying can delay the last landing by at most the skew.
    CHECK(b->finished <= a->finished + srd.spray_skew);
  }
  // Single NIC, single QP, RC: the posting order is the landing order.
  auto one = large_write("cx7-400g");
  auto r = simulate_imm_transfer(one, 1);
  REQUIRE(r.ok());
  CHECK(r->out_of_order == 0);
}

TEST_CASE("a scatter to receivers of different sizes completes every receiver's counter") {
  imm::ScatterWrite w{{{0, 0, 0, 8 << 20}, {1, 8 << 20, 0, 1 << 20}, {2, 9 << 20, 0, 512}}};
  auto spec = preset_transfer("efa-200g", w, imm::Regions{16 << 20, {8 << 20, 8 << 20, 8 << 20}});
  REQUIRE(spec.ok());
  spec->shard_by = imm::ShardBy::Receivers;
  auto r = simulate_imm_transfer(spec.value(), 3);
  REQUIRE(r.ok());
  REQUIRE(r->completion.size() == 3);
  CHECK(r->shortfalls.empty());
  CHECK(r->completion[2] < r->completion[0]);  // 512 bytes land long before 8 MiB
  CHECK(r->finished == r->completion[0]);
}

TEST_CASE("a transfer that cannot be sharded is an error, not a run") {
  auto spec = large_write("cx7-400g");
  spec.regions.dst_bytes[0] = kBytes / 2;
  CHECK_FALSE(simulate_imm_transfer(spec, 1).ok());
  spec = large_write("cx7-400g");
  spec.send_window = 0;
  CHECK_FALSE(simulate_imm_transfer(spec, 1).ok());
}
