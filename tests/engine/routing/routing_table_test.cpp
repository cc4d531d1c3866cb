#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <set>

#include "engine/core/rng.hpp"
#include "engine/routing/mesh_groups.hpp"
#include "engine/routing/model_layout.hpp"
#include "engine/routing/weight_transfer_plan.hpp"

using namespace railcheck;
using namespace railcheck::routing;

namespace {

// Trainer ranks {0, 1} share one mesh holding `sizes` (bytes, as F32 vectors); one rollout GPU
// wants all of them.
struct TwoOwners {
  TrainerMetadata trainer{2, {DeviceMesh{{0, 1}, {2}}}, {}};
  RolloutMetadata rollout{{}, {{}}};
  explicit TwoOwners(std::initializer_list<std::uint64_t> sizes) {
    for (std::uint64_t bytes : sizes) {
      const std::string name = "p" + std::to_string(trainer.params.size());
      trainer.params.push_back({name, {bytes / 4}, DType::F32, 0, {Placement::shard(0)}});
      rollout.gpus[0].push_back({static_cast<std::uint32_t>(rollout.params.size()), bytes / 4});
      rollout.params.push_back({name, {bytes / 4}, DType::F32});
    }
  }
  WeightRoutingTable build() const {
    auto m = match_weights(trainer, rollout, ModelRules{"two", {}});
    REQUIRE(m.ok());
    return build_routing_table(trainer, rollout, m.value());
  }
};

bool disjoint(const std::vector<DeviceMesh>& meshes, const std::vector<std::uint32_t>& group) {
  std::set<std::uint32_t> seen;
  for (std::uint32_t m : group)
    for (std::uint32_t r : meshes[m].ranks)
      if (!seen.insert(r).second) return false;
  return true;
}

void check_groups_partition(const std::vector<DeviceMesh>& meshes,
                            const std::vector<std::vector<std::uint32_t>>& groups) {
  std::vector<std::uint32_t> all;
  for (const auto& g : groups) {
    CHECK(disjoint(meshes, g));
    all.insert(all.end(), g.begin(), g.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<std::uint32_t> want(meshes.size());
  std::iota(want.begin(), want.end(), 0u);
  CHECK(all == want);
}

}  // namespace

TEST_CASE("each parameter goes from the owner that has sent the fewest bytes", "[routing][table]") {
  SECTION("equal sizes alternate") {
    auto t = TwoOwners({400, 400, 400, 400}).build();
    CHECK(t.sent_bytes == std::vector<std::uint64_t>{800, 800});
  }
  SECTION("a large one first, then the small ones all go to the other owner") {
    auto t = TwoOwners({1200, 400, 400, 400}).build();
    CHECK(t.sent_bytes == std::vector<std::uint64_t>{1200, 1200});
    const auto& tasks = t.groups.at(0).per_trainer;
    CHECK(tasks[0][0].writes.size() == 1);
    for (int i = 1; i < 4; ++i) CHECK(tasks[1][i].writes.size() == 1);
  }
  SECTION("ties go to the lowest rank") {
    auto t = TwoOwners({400}).build();
    CHECK(t.sent_bytes == std::vector<std::uint64_t>{400, 0});
  }
}

TEST_CASE("the seed's FSDP=2 PP=2 EP=8 cluster splits into a non-expert and an expert mesh group", "[routing][mesh]") {
  const ModelConfig c = *find_model_config("qwen3-235b-a22b");
  auto t = trainer_metadata(c, {.pp = 2, .fsdp = 2, .ep = 8});
  REQUIRE(t.ok());
  const auto groups = find_disjoint_mesh_groups(t->meshes);
  REQUIRE(groups.size() == 2);
  REQUIRE(groups[0].size() == 2);
  REQUIRE(groups[1].size() == 16);
  // Seed: "DeviceMesh 0: 0~7, 16~23" and "DeviceMesh 0: 0, 16 ... DeviceMesh 15: 15, 31".
  std::vector<std::uint32_t> mesh0;
  for (std::uint32_t r = 0; r < 8; ++r) mesh0.push_back(r);
  for (std::uint32_t r = 16; r < 24; ++r) mesh0.push_back(r);
  CHECK(t->meshes[groups[0][0]].ranks == mesh0);
  CHECK(t->meshes[groups[1][0]].ranks == std::vector<std::uint32_t>{0, 16});
  CHECK(t->meshes[groups[1][15]].ranks == std::vector<std::uint32_t>{15, 31});
  check_groups_partition(t->meshes, groups);
}

TEST_CASE("mesh groups of random meshes are disjoint and cover every mesh", "[routing][mesh]") {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    INFO("seed " << seed);
    SeededRng rng(seed);
    std::vector<DeviceMesh> meshes;
    const std::uint64_t ranks = 4 + rng.below(28);
    for (std::uint64_t m = 0, n = 1 + rng.below(30); m < n; ++m) {
      std::set<std::uint32_t> members;
      for (std::uint64_t k = 0, size = 1 + rng.below(4); k < size; ++k)
        members.insert(static_cast<std::uint32_t>(rng.below(ranks)));
      std::vector<std::uint32_t> rs(members.begin(), members.end());
      meshes.push_back({rs, {static_cast<std::uint32_t>(rs.size())}});
    }
    check_groups_partition(meshes, find_disjoint_mesh_groups(meshes));
  }
}

TEST_CASE("a real model's table: same gather order per mesh, sources own what they send, bytes add up",
          "[routing][table]") {
  auto plan = plan_weight_transfer(*find_model_config("deepseek-v3"), {.pp = 2, .fsdp = 2, .ep = 8},
                                   {.replicas = 2, .gpus_per_replica = 8, .dtype = DType::FP8});
  REQUIRE(plan.ok());
  const TrainerMetadata& t = plan->trainer;
  const RolloutMetadata& r = plan->rollout;
  const WeightRoutingTable& table = plan->table;

  std::uint64_t held = 0;
  for (const auto& gpu : r.gpus)
    for (const auto& h : gpu) held += h.elements * bytes_per_element(r.params[h.param].dtype);
  CHECK(table.total_bytes == held);
  CHECK(std::accumulate(table.sent_bytes.begin(), table.sent_bytes.end(), std::uint64_t{0}) == held);
  CHECK(std::accumulate(table.received_bytes.begin(), table.received_bytes.end(), std::uint64_t{0}) == held);

  for (const auto& g : table.groups) {
    for (std::uint32_t mesh : g.meshes) {
      const auto& ranks = t.meshes[mesh].ranks;
      std::vector<std::uint32_t> order0;
      for (const auto& task : g.per_trainer[ranks[0]]) order0.push_back(task.mapping);
      for (std::uint32_t member : ranks) {
        std::vector<std::uint32_t> order;
        for (const auto& task : g.per_trainer[member]) {
          order.push_back(task.mapping);
          // The sender holds the gathered tensor: it is a member of the parameter's mesh.
          if (!task.writes.empty()) CHECK(plan->mappings.at(task.mapping).mesh == mesh);
        }
        CHECK(order == order0);
      }
    }
  }
  // Least-bytes-so-far keeps the senders of a group within one parameter of each other.
  const auto [lo, hi] = std::minmax_element(table.sent_bytes.begin(), table.sent_bytes.end());
  CHECK(static_cast<double>(*lo) > 0.8 * static_cast<double>(*hi));
}

TEST_CASE("the interleaved table order takes a mesh's parameters in turn by the rollout GPU they go to",
          "[routing][table]") {
  // Ranks {0, 1} share a mesh of p0..p3; rollout GPU 0 holds p0 and p1, GPU 1 holds p2 and p3.
  TrainerMetadata trainer{2, {DeviceMesh{{0, 1}, {2}}}, {}};
  RolloutMetadata rollout{{}, {{}, {}}};
  for (std::uint32_t i = 0; i < 4; ++i) {
    const std::string name = "p" + std::to_string(i);
    trainer.params.push_back({name, {100}, DType::F32, 0, {Placement::shard(0)}});
    rollout.params.push_back({name, {100}, DType::F32});
    rollout.gpus[i / 2].push_back({i, 100});
  }
  auto m = match_weights(trainer, rollout, ModelRules{"two-gpus", {}});
  REQUIRE(m.ok());
  const auto order = [&](TableOrder o) {
    const auto t = build_routing_table(trainer, rollout, m.value(), o);
    std::vector<std::vector<std::uint32_t>> per_rank(2);
    for (std::uint32_t r = 0; r < 2; ++r)
      for (const TransferTask& task : t.groups.at(0).per_trainer[r]) per_rank[r].push_back(task.mapping);
    CHECK(per_rank[0] == per_rank[1]);  // a collective: every member in the same order
    CHECK(t.total_bytes == 1600);
    return per_rank[0];
  };
  CHECK(order(TableOrder::Model) == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(order(TableOrder::Interleaved) == std::vector<std::uint32_t>{0, 2, 1, 3});
}
