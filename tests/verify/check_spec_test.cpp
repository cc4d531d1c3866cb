// Model files for `railcheck check`: what they set, and the errors a bad one gets.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "verify/bootstrap_auth/auth_model.hpp"
#include "verify/check_spec.hpp"
#include "verify/imm/imm_world.hpp"
#include "verify/plan/plan_models.hpp"
#include "verify/zerobuf/zerobuf_check.hpp"

using namespace railcheck;
using namespace railcheck::verify;

TEST_CASE("a model file sets the world, the bound, the search and the engine") {
  const auto spec = load_check_spec_string(R"(
name = "m"
mutation = "replay-swapped"
invariants = ["exactly-once-in-order", "no-deadlock"]
[world]
paths = 4
messages = 4
recv_group = 2
[bounds]
link_failures = 3
losses = 0
horizon_ms = 5000
[search]
mode = "random"
walks = 17
seed = 9
[engine]
replay_policy = "probe"
heartbeat_ms = 250
)",
                                           "m.toml");
  REQUIRE(spec);
  const CheckSpec& s = spec.value();
  CHECK(s.model.paths == 4);
  CHECK(s.model.recv_group == 2);
  CHECK(s.model.ordered);
  CHECK(s.model.link_failures == 3);
  CHECK(s.model.losses == 0);
  CHECK(s.model.horizon == ms(5000));
  CHECK(s.model.mutation == Mutation::ReplaySwapped);
  CHECK(s.model.tunables.replay == ReplayPolicy::Probe);
  CHECK(s.model.tunables.heartbeat_interval == ms(250));
  CHECK(s.limits.mode == SearchMode::Random);
  CHECK(s.limits.walks == 17);
  CHECK(s.invariants.size() == 2);
}

TEST_CASE("bad model files name the file, the line and the key") {
  auto err = [](const char* text) { return load_check_spec_string(text, "bad.toml").error().what; };
  CHECK_THAT(err("[world]\npathz = 3\n"), Catch::Contains("bad.toml:2: world.pathz") && Catch::Contains("paths"));
  CHECK_THAT(err("[world]\nmessages = 3\nrecv_group = 2\n"), Catch::Contains("a divisor of messages = 3"));
  CHECK_THAT(err("[search]\nmode = \"bfd\"\n"), Catch::Contains("search.mode"));
  CHECK_THAT(err("mutation = \"chaos\"\n"), Catch::Contains("mutation") && Catch::Contains("replay-swapped"));
  CHECK_THAT(err("invariants = [\"always-fine\"]\n"), Catch::Contains("exactly-once-in-order"));
  CHECK_THAT(err("[engine]\nqp_timeout = 99\n"), Catch::Contains("engine.qp_timeout"));
  // The engine assumes RC / FI_ORDER_SAS delivery: an unordered world is refused, naming that.
  CHECK_THAT(err("[world]\nordered = false\n"),
             Catch::Contains("world.ordered") && Catch::Contains("in-order delivery") &&
                 Catch::Contains("FI_ORDER_SAS"));
  CHECK(load_check_spec_string("[world]\nordered = true\n", "ok.toml"));
  CHECK_THAT(err("[world\n"), Catch::Contains("bad.toml:1: TOML syntax error"));
  CHECK_THAT(load_check_spec_file("/nonexistent/model.toml").error().what, Catch::Contains("no such file"));
}

TEST_CASE("a scenario file becomes the standard bound over its paths and policy") {
  const auto spec = load_check_spec_file(RAILCHECK_SOURCE_DIR "/scenarios/standby-dies-three-paths.toml");
  REQUIRE(spec);
  CHECK(spec.value().model.paths == 3);
  CHECK(spec.value().model.tunables.replay == ReplayPolicy::Resync);
  CHECK(spec.value().model.link_failures == 2);
}

TEST_CASE("every shipped model file loads") {
  for (const char* f : {"standard-resync", "standard-probe", "standard-naive", "bidirectional", "stress-resync"}) {
    INFO(f);
    CHECK(load_check_spec_file(std::string(RAILCHECK_SOURCE_DIR "/verify/models/") + f + ".toml"));
  }
}

// As `railcheck check` and fuzz_check_spec read them: by the loader of the world each names.
TEST_CASE("every file in verify/models loads by the world it names") {
  std::size_t named = 0;
  for (const auto& e : std::filesystem::directory_iterator(RAILCHECK_SOURCE_DIR "/verify/models")) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path());
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto world = model_world(text);
    named += world.has_value();
    if (world == "plan-channels") {
      CHECK(plan::load_channel_model(text, e.path()).ok());
    } else if (world == "plan-lifecycle") {
      CHECK(plan::load_lifecycle_model(text, e.path()).ok());
    } else if (world == "imm") {
      CHECK(imm::load_imm_model(text, e.path()).ok());
    } else if (world == "bootstrap-auth") {
      CHECK(bootstrap::load_auth_model(text, e.path()).ok());
    } else if (verify::zerobuf::names_zerobuf_world(text)) {
      CHECK(verify::zerobuf::load_zerobuf_spec_string(text, e.path()).ok());
    } else {
      CHECK_FALSE(world.has_value());
      CHECK(load_check_spec_string(text, e.path()).ok());
    }
  }
  CHECK(named >= 9);
}
