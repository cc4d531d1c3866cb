// railcheck check / replay: exit codes, the trace file, and the JSON result.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"

using namespace railcheck::cli;

namespace {

const char* kSmallModel = R"(
[world]
paths = 2
messages = 2
bidirectional = false
[bounds]
link_failures = 1
losses = 1
timer_races = 1
)";

std::string write(const std::string& name, const std::string& content) {
  const std::string path = "/tmp/railcheck-check-test-" + name;
  std::ofstream(path) << content;
  return path;
}

}  // namespace

TEST_CASE("railcheck check: naive exits 1 and writes a trace that replay reproduces", "[cli]") {
  CheckOptions o;
  o.file = write("small.toml", kSmallModel);
  o.policy = "naive";
  o.mode = "bfs";
  o.trace_path = "/tmp/railcheck-check-test-naive.trace.json";
  std::remove(o.trace_path.c_str());
  REQUIRE(cmd_check(o) == kExitViolation);
  ReplayOptions r;
  r.trace = o.trace_path;
  CHECK(cmd_replay(r) == kExitViolation);
}

TEST_CASE("railcheck check: resync exhausts the bound, exits 0 and says so in JSON", "[cli]") {
  CheckOptions o;
  o.file = write("small2.toml", kSmallModel);
  o.policy = "resync";
  o.json_path = "/tmp/railcheck-check-test-resync.json";
  REQUIRE(cmd_check(o) == kExitOk);
  std::ifstream f(o.json_path);
  const auto j = nlohmann::json::parse(f);
  CHECK(j.at("exhausted") == true);
  CHECK(j.at("distinct_states").get<std::uint64_t>() > 1000);
  CHECK_FALSE(j.contains("violation"));
  // The figures of the final line, under the same names.
  const double secs = j.at("seconds").get<double>();
  REQUIRE(secs > 0);
  CHECK(j.at("distinct_per_second").get<double>() ==
        Approx(static_cast<double>(j.at("distinct_states").get<std::uint64_t>()) / secs));
  CHECK(j.at("states_per_second").get<double>() ==
        Approx(static_cast<double>(j.at("states").get<std::uint64_t>()) / secs));
  CHECK(j.at("cpu_seconds").get<double>() > 0);
}

TEST_CASE("railcheck check: a state limit is inconclusive (exit 3), bad input exits 2", "[cli]") {
  CheckOptions o;
  o.file = write("small3.toml", kSmallModel);
  o.max_states = 50;
  CHECK(cmd_check(o) == kExitInconclusive);
  o.max_states.reset();
  o.mode = "sideways";
  CHECK(cmd_check(o) == kExitBadInput);
  o.mode.clear();
  o.policy = "hope";
  CHECK(cmd_check(o) == kExitBadInput);
  o.policy.clear();
  o.file = write("bad.toml", "[world]\npaths = 0\n");
  CHECK(cmd_check(o) == kExitBadInput);
  ReplayOptions r;
  r.trace = write("bad.trace.json", "{\"railcheck_trace\": 1}");
  CHECK(cmd_replay(r) == kExitBadInput);
}
