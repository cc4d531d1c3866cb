#include <catch2/catch.hpp>
#include <filesystem>

#include "models/scenario.hpp"

using namespace railcheck;

namespace {
std::string error_of(const std::string& toml) {
  auto r = load_scenario_string(toml, "t.toml");
  REQUIRE_FALSE(r.ok());
  return r.error().what;
}
}  // namespace

TEST_CASE("every shipped scenario loads", "[scenario]") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path());
    auto r = load_scenario_file(e.path().string());
    INFO((r ? std::string() : r.error().message()));
    CHECK(r.ok());
    ++n;
  }
  CHECK(n >= 6);
}

TEST_CASE("scenario defaults and overrides", "[scenario]") {
  auto r = load_scenario_string(R"(
[topology]
ranks = 4
rails = 3
nic = "efa-200g"
[workload]
message_bytes = "64KiB"
recv_group = 4
[engine]
qp_timeout = 12
replay_policy = "probe"
[[faults.flap]]
rank = 1
rail = 2
start_ms = 5
period_ms = 10
down_ms = 2
count = 3
)",
                                "ok.toml");
  REQUIRE(r.ok());
  CHECK(r->topology.ranks == 4);
  CHECK(r->topology.nic.name == "efa-200g");
  CHECK(r->workload.message_bytes == 64 * 1024);
  CHECK(r->workload.recv_group == 4);
  CHECK(r->engine.qp.timeout == 12);
  CHECK(r->engine.replay == ReplayPolicy::Probe);
  REQUIRE(r->faults.flaps.size() == 1);
  CHECK(r->faults.flaps[0].count == 3);
}

TEST_CASE("scenario errors name the file, the line, the key and what was expected", "[scenario]") {
  CHECK_THAT(error_of("[topology]\nranks = 2\nrials = 2\n"), Catch::Contains("t.toml:3: topology.rials: unknown key"));
  CHECK_THAT(error_of("[workload]\nmessages = \"many\"\n"),
             Catch::Contains("t.toml:2: workload.messages: expected a number"));
  CHECK_THAT(error_of("[workload]\nmessages = 2.5\n"), Catch::Contains("expected a whole number"));
  CHECK_THAT(error_of("[topology]\nranks = 1\n"), Catch::Contains("t.toml:2: topology.ranks: expected a value in [2"));
  CHECK_THAT(error_of("[topology]\nnic = \"mlx99\"\n"),
             Catch::Contains("unknown NIC preset \"mlx99\" (presets: cx7-400g"));
  CHECK_THAT(error_of("[engine]\nreplay_policy = \"yolo\"\n"), Catch::Contains("engine.replay_policy"));
  CHECK_THAT(error_of("[engine]\nqp_timeout = 40\n"), Catch::Contains("t.toml:2: engine.qp_timeout"));
  CHECK_THAT(error_of("[engine]\nrto_magic = 1\n"), Catch::Contains("unknown engine tunable"));
  CHECK_THAT(error_of("[[faults.link_down]]\nrank = 0\nrail = 5\n"), Catch::Contains("faults.link_down[0].rail"));
  CHECK_THAT(error_of("[[faults.link_down]]\nat_ms = 10\nuntil_ms = 5\n"),
             Catch::Contains("expected a time after at_ms"));
  CHECK_THAT(error_of("[topology]\nrails = 2\npaths_per_conn = 3\n"), Catch::Contains("expected at most rails = 2"));
  CHECK_THAT(error_of("[topology\n"), Catch::Contains("t.toml:1: TOML syntax error"));
}

TEST_CASE("a missing scenario file is a clear error", "[scenario]") {
  auto r = load_scenario_file("/nonexistent/x.toml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("cannot open scenario file /nonexistent/x.toml"));
}
