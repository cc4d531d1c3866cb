#include "engine/routing/model_layout.hpp"

#include <catch2/catch.hpp>

using namespace railcheck::routing;

TEST_CASE("generated parameter lists add up to the models' published sizes", "[routing][models]") {
  // Published totals: Qwen3-235B-A22B 235B; DeepSeek-V3 671B (without its 14B MTP module);
  // Kimi-K2 "1T total" (1.03T by its config).
  const std::pair<const char*, double> expected[] = {
      {"qwen3-235b-a22b", 235e9}, {"deepseek-v3", 671e9}, {"kimi-k2", 1.03e12}};
  for (const auto& [name, total] : expected) {
    INFO(name);
    auto c = find_model_config(name);
    REQUIRE(c);
    const double n = static_cast<double>(parameter_count(model_parameters(*c)));
    CHECK(n == Approx(total).epsilon(0.01));
  }
}

TEST_CASE("every generated model matches trainer to rollout names, bf16 and fp8", "[routing][models]") {
  for (const ModelConfig& c : model_configs()) {
    for (DType d : {DType::BF16, DType::FP8}) {
      INFO(c.name << " rollout " << to_string(d));
      auto t = trainer_metadata(c, {.pp = 2, .fsdp = 2, .ep = 4});
      auto r = rollout_metadata(c, {.replicas = 2, .gpus_per_replica = 4, .dtype = d});
      REQUIRE(t.ok());
      REQUIRE(r.ok());
      auto m = match_weights(t.value(), r.value(), model_rules(c));
      INFO((m.ok() ? "" : m.error().message()));
      REQUIRE(m.ok());
      std::size_t quantized = 0;
      for (const auto& x : m.value()) quantized += x.quantize ? 1 : 0;
      CHECK((d == DType::FP8) == (quantized > 0));
    }
  }
}

TEST_CASE("a replica's GPUs together hold each fp8 weight exactly once", "[routing][models]") {
  const ModelConfig c = *find_model_config("qwen3-235b-a22b");
  auto r = rollout_metadata(c, {.replicas = 2, .gpus_per_replica = 8, .dtype = DType::FP8});
  REQUIRE(r.ok());
  std::uint64_t replica0 = 0, replica1 = 0, sharded = 0;
  for (std::uint32_t g = 0; g < 16; ++g)
    for (const auto& h : r->gpus[g]) (g < 8 ? replica0 : replica1) += h.elements;
  for (const auto& p : r->params) sharded += element_count(p.shape);
  CHECK(replica0 == replica1);
  // Norms and routers are replicated across the 8 TP ranks, so a replica holds a little more
  // than one copy; everything else exactly once.
  CHECK(replica0 >= sharded);
  CHECK(static_cast<double>(replica0) == Approx(static_cast<double>(sharded)).epsilon(0.002));
}

TEST_CASE("layouts that cannot exist are errors, not empty tables", "[routing][models]") {
  const ModelConfig c = *find_model_config("kimi-k2");
  CHECK_FALSE(trainer_metadata(c, {.pp = 62, .fsdp = 1, .ep = 1}).ok());
  CHECK_FALSE(trainer_metadata(c, {.pp = 1, .fsdp = 1, .ep = 385}).ok());
  CHECK_FALSE(rollout_metadata(c, {.replicas = 0, .gpus_per_replica = 8}).ok());
}
