#include "engine/routing/weight_matching.hpp"

#include <catch2/catch.hpp>

using namespace railcheck;
using namespace railcheck::routing;

namespace {

// One trainer rank, one mesh, one rollout GPU: the smallest world where names can be checked.
struct TinyWorld {
  TrainerMetadata trainer{1, {DeviceMesh{{0}, {1}}}, {}};
  RolloutMetadata rollout{{}, {{}}};
  ModelRules rules{"tiny", {{"attn.qkv_proj", {"attn.q_proj", "attn.k_proj", "attn.v_proj"}}}, ".weight_scale_inv"};

  void train(std::string name, std::vector<std::uint64_t> shape) {
    trainer.params.push_back({std::move(name), std::move(shape), DType::BF16, 0, {Placement::replicate()}});
  }
  void serve(std::string name, std::vector<std::uint64_t> shape, DType t) {
    rollout.gpus[0].push_back({static_cast<std::uint32_t>(rollout.params.size()), element_count(shape)});
    rollout.params.push_back({std::move(name), std::move(shape), t});
  }
  Result<std::vector<WeightMapping>> match() const { return match_weights(trainer, rollout, rules); }
};

TinyWorld qkv_world() {
  TinyWorld w;
  w.train("l0.attn.q_proj.weight", {256, 128});
  w.train("l0.attn.k_proj.weight", {128, 128});
  w.train("l0.attn.v_proj.weight", {128, 128});
  w.train("l0.norm.weight", {128});
  return w;
}

}  // namespace

TEST_CASE("q, k and v fuse into qkv in rule order and a plain name maps to itself", "[routing][matching]") {
  TinyWorld w = qkv_world();
  w.serve("l0.attn.qkv_proj.weight", {512, 128}, DType::BF16);
  w.serve("l0.norm.weight", {128}, DType::BF16);
  auto m = w.match();
  REQUIRE(m.ok());
  REQUIRE(m->size() == 2);
  CHECK(m->at(0).parts == std::vector<std::uint32_t>{0, 1, 2});
  CHECK_FALSE(m->at(0).quantize);
  CHECK(m->at(0).gathered_bytes == 512 * 128 * 2);
  CHECK(m->at(1).parts == std::vector<std::uint32_t>{3});
}

TEST_CASE("an fp8 rollout weight pairs with its block scale and is quantized", "[routing][matching]") {
  TinyWorld w = qkv_world();
  w.serve("l0.attn.qkv_proj.weight", {512, 128}, DType::FP8);
  w.serve("l0.attn.qkv_proj.weight_scale_inv", {4, 1}, DType::F32);
  w.serve("l0.norm.weight", {128}, DType::BF16);
  auto m = w.match();
  REQUIRE(m.ok());
  CHECK(m->at(0).quantize);
  CHECK(m->at(0).scale == 1u);
}

TEST_CASE("matching names the parameter that does not fit", "[routing][matching]") {
  TinyWorld w = qkv_world();
  SECTION("a fused shape that disagrees with the rollout's") {
    w.serve("l0.attn.qkv_proj.weight", {500, 128}, DType::BF16);
    w.serve("l0.norm.weight", {128}, DType::BF16);
    auto m = w.match();
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().what, Catch::Contains("l0.attn.qkv_proj.weight") && Catch::Contains("[512, 128]"));
  }
  SECTION("fp8 without a scale") {
    w.serve("l0.attn.qkv_proj.weight", {512, 128}, DType::FP8);
    w.serve("l0.norm.weight", {128}, DType::BF16);
    auto m = w.match();
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().what, Catch::Contains("no scale"));
  }
  SECTION("a scale whose block count is wrong") {
    w.serve("l0.attn.qkv_proj.weight", {512, 128}, DType::FP8);
    w.serve("l0.attn.qkv_proj.weight_scale_inv", {3, 1}, DType::F32);
    w.serve("l0.norm.weight", {128}, DType::BF16);
    REQUIRE_FALSE(w.match().ok());
  }
  SECTION("a trainer parameter that no rollout parameter uses") {
    w.serve("l0.attn.qkv_proj.weight", {512, 128}, DType::BF16);
    auto m = w.match();
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().what, Catch::Contains("l0.norm.weight") && Catch::Contains("no rollout counterpart"));
  }
  SECTION("a rollout parameter that no trainer has") {
    w.serve("l0.attn.qkv_proj.weight", {512, 128}, DType::BF16);
    w.serve("l0.norm.weight", {128}, DType::BF16);
    w.serve("l0.extra.weight", {4}, DType::BF16);
    auto m = w.match();
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().what, Catch::Contains("l0.extra.weight"));
  }
}
