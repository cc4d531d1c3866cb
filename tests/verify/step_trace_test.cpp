// Step traces (verify/step_trace.hpp): written and read back, bad ones refused with a reason,
// and replay_steps refusing a step the world does not offer.
#include "verify/step_trace.hpp"

#include <catch2/catch.hpp>

#include "verify/imm/imm_world.hpp"

using namespace railcheck;
using namespace railcheck::verify;

TEST_CASE("a step trace reads back as written") {
  const StepTrace t{"imm", "world = \"imm\"\n", "no-double-count", "twice", {"write 0 acked", "land write 0"}};
  const std::string text = write_step_trace(t);
  CHECK(trace_world(text) == "imm");
  auto back = read_step_trace(text, "t.json");
  REQUIRE(back.ok());
  CHECK(back->model_toml == t.model_toml);
  CHECK(back->steps == t.steps);
  CHECK(back->invariant == "no-double-count");
}

TEST_CASE("a step trace that is not one is refused with a reason") {
  CHECK_FALSE(trace_world("not json").has_value());
  CHECK_FALSE(trace_world("{\"world\": \"imm\"}").has_value());  // no version
  auto empty = read_step_trace(R"({"railcheck_trace": 1, "world": "imm", "model_toml": "", "steps": []})", "e.json");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.error().message(), Catch::Contains("no steps"));
  auto bad = read_step_trace(R"({"railcheck_trace": 1, "world": "imm", "steps": [1]})", "b.json");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message(), Catch::Contains("b.json: malformed trace"));
}

TEST_CASE("replay_steps runs the steps a world offers and stops at the first it does not") {
  imm::ImmWorld w(imm::ImmModel{"m", 1, ReplayPolicy::Naive, true});
  const std::vector<std::string> steps = {"write 0 ack-lost", "land write 0", "land write 0 (replayed copy)",
                                          "register the expectation"};
  auto r = replay_steps(w, std::span<const std::string>(steps), imm::imm_invariants());
  REQUIRE(r.ok());
  CHECK(r->steps_run == 4);
  CHECK(r->invariant.has_value());  // the naive replay is counted twice
  imm::ImmWorld w2(imm::ImmModel{"m", 1, ReplayPolicy::Naive, true});
  const std::vector<std::string> wrong = {"write 0 ack-lost", "land write 7"};
  auto bad = replay_steps(w2, std::span<const std::string>(wrong), imm::imm_invariants());
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().what, Catch::Contains("step 2 \"land write 7\" is not possible here"));
}

TEST_CASE("a step trace's version is compared, never converted (1e22 is not a version)") {
  CHECK_FALSE(trace_world(R"({"railcheck_trace": 1e22, "world": "imm"})").has_value());
  CHECK_FALSE(read_step_trace(R"({"railcheck_trace": 1e22, "world": "imm", "model_toml": "", "steps": ["x"]})", "v")
                  .ok());
  CHECK(trace_world(R"({"railcheck_trace": 1, "world": "imm"})") == "imm");
}
