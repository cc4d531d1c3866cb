#include "engine/imm/nic_sharding.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "engine/core/rng.hpp"

using namespace railcheck;
using namespace railcheck::imm;

namespace {

// Every piece is non-empty, inside both regions, and the pieces of each extent tile it exactly.
void check_tiles(const WriteShape& shape, const Regions& regions, const std::vector<WritePiece>& pieces) {
  const std::vector<Extent> extents = extents_of(shape);
  std::map<std::uint32_t, std::uint64_t> covered;
  for (const WritePiece& p : pieces) {
    CHECK(p.length > 0);
    CHECK(p.dst_offset < regions.dst_bytes[p.receiver]);
    CHECK(p.dst_offset + p.length <= regions.dst_bytes[p.receiver]);
    CHECK(p.src_offset + p.length <= regions.src_bytes);
    const Extent& e = extents[p.extent];
    CHECK(p.src_offset - e.src_offset == p.dst_offset - e.dst_offset);
    CHECK(p.src_offset == e.src_offset + covered[p.extent]);  // pieces in order, no gap, no overlap
    covered[p.extent] += p.length;
  }
  for (const Extent& e : extents) CHECK(covered[e.index] == e.length);
}

}  // namespace

TEST_CASE("byte sharding splits a large write evenly in whole MTUs and the pieces sum to the write") {
  const SingleWrite w{0, 0, 0, 10 * 4096 + 100};
  const Regions regions{w.length, {w.length}};
  auto pieces = shard_write(w, regions, {ShardBy::Bytes, 4, 4096});
  REQUIRE(pieces.ok());
  REQUIRE(pieces->size() == 4);
  // 11 MTU units over 4 NICs: 3, 3, 3, 2 units; the last one is short by the partial MTU.
  CHECK(pieces.value()[0].length == 3 * 4096);
  CHECK(pieces.value()[2].length == 3 * 4096);
  CHECK(pieces.value()[3].length == 4096 + 100);
  check_tiles(w, regions, pieces.value());
}

TEST_CASE("a write smaller than NICs x MTU posts no zero-length piece at the end of the region") {
  // The seed's failure: an FP8 block-quant inv_scale under 1 KiB, sharded over 4 EFA NICs, ending
  // exactly at the end of its region.
  const SingleWrite w{0, 0, 4096 - 512, 512};
  const Regions regions{4096, {4096}};
  auto pieces = shard_write(w, regions, {ShardBy::Bytes, 4, 8928});
  REQUIRE(pieces.ok());
  REQUIRE(pieces->size() == 1);
  CHECK(pieces_for(pieces.value(), 0) == 1);
  check_tiles(w, regions, pieces.value());
}

TEST_CASE("randomized shapes: every sharding tiles its extents inside the regions") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    SeededRng rng(seed);
    const std::uint32_t receivers = 1 + static_cast<std::uint32_t>(rng.below(4));
    ScatterWrite w;
    Regions regions{1 << 20, std::vector<std::uint64_t>(receivers, 1 << 16)};
    for (std::uint32_t r = 0; r < receivers; ++r) {
      const std::uint64_t len = rng.below(1 << 16);
      w.parts.push_back({r, rng.below((1 << 20) - len + 1), (1 << 16) - len, len});
    }
    const ShardRule rule{static_cast<ShardBy>(rng.below(4)), 1 + static_cast<std::uint32_t>(rng.below(4)),
                         static_cast<std::uint32_t>(512 + rng.below(9000)), 0, rng.below(2) ? 0 : 1 + rng.below(20000)};
    auto pieces = shard_write(w, regions, rule);
    if (total_bytes(w) == 0) {
      CHECK_FALSE(pieces.ok());
      continue;
    }
    REQUIRE(pieces.ok());
    for (const WritePiece& p : pieces.value()) {
      CHECK(p.nic < rule.nics);
      if (rule.max_piece_bytes > 0) CHECK(p.length <= rule.max_piece_bytes);
    }
    check_tiles(w, regions, pieces.value());
  }
}

TEST_CASE("page sharding deals whole pages round robin over the NICs") {
  PagedWrite w{0, 4096, {{0, 8192}, {16384, 0}, {4096, 4096}}};
  const Regions regions{1 << 20, {1 << 20}};
  auto pieces = shard_write(w, regions, {ShardBy::Pages, 2, 4096});
  REQUIRE(pieces.ok());
  REQUIRE(pieces->size() == 3);
  CHECK(pieces.value()[0].nic == 0);
  CHECK(pieces.value()[1].nic == 1);
  CHECK(pieces.value()[2].nic == 0);
  CHECK(pieces.value()[1].dst_offset == 0);
  check_tiles(w, regions, pieces.value());
}

TEST_CASE("receiver sharding keeps each receiver on one NIC, pinned puts everything on one") {
  ScatterWrite w{{{0, 0, 0, 100}, {1, 100, 0, 9000}, {2, 9100, 0, 40}}};
  const Regions regions{1 << 20, {1 << 16, 1 << 16, 1 << 16}};
  auto by_rx = shard_write(w, regions, {ShardBy::Receivers, 2, 4096});
  REQUIRE(by_rx.ok());
  CHECK(by_rx.value()[0].nic == 0);
  CHECK(by_rx.value()[1].nic == 1);
  CHECK(by_rx.value()[2].nic == 0);
  auto pinned = shard_write(w, regions, {ShardBy::Pinned, 2, 4096, 1});
  REQUIRE(pinned.ok());
  for (const WritePiece& p : pinned.value()) CHECK(p.nic == 1);
  CHECK(pieces_for(pinned.value(), 1) == 1);
}

TEST_CASE("extents outside their regions and bad rules are errors that name the input") {
  const Regions regions{4096, {4096}};
  auto over = shard_write(SingleWrite{0, 0, 4000, 200}, regions, {});
  REQUIRE_FALSE(over.ok());
  CHECK_THAT(over.error().what, Catch::Contains("destination [4000, 4200)"));
  CHECK_FALSE(shard_write(SingleWrite{1, 0, 0, 10}, regions, {}).ok());
  CHECK_FALSE(shard_write(SingleWrite{0, 0, 0, 10}, regions, {ShardBy::Pinned, 2, 4096, 2}).ok());
  CHECK_FALSE(shard_write(SingleWrite{0, 0, 0, 10}, regions, {ShardBy::Bytes, 0, 4096}).ok());
  CHECK_FALSE(shard_write(SingleWrite{0, 0, 4096, 0}, regions, {}).ok());
}
