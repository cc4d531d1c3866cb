#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"

using namespace railcheck::cli;

namespace {
std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = "/tmp/railcheck-test-" + name;
  std::ofstream(path) << content;
  return path;
}
}  // namespace

TEST_CASE("railcheck run exits 2 on a bad scenario and on a bad policy", "[cli]") {
  RunOptions o;
  o.scenario = temp_file("bad.toml", "[topology]\nranks = 1\n");
  CHECK(cmd_run(o) == kExitBadInput);
  o.scenario = std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/short-flap.toml";
  o.policy = "sometimes";
  CHECK(cmd_run(o) == kExitBadInput);
}

TEST_CASE("railcheck run writes the summary as JSON and exits 0 on a clean run", "[cli]") {
  RunOptions o;
  o.scenario = std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/short-flap.toml";
  o.json_path = "/tmp/railcheck-test-short-flap.json";
  std::remove(o.json_path.c_str());
  REQUIRE(cmd_run(o) == kExitOk);
  std::ifstream f(o.json_path);
  REQUIRE(f);
  const auto j = nlohmann::json::parse(f);
  CHECK(j.at("outcome") == "delivered");
  CHECK(j.at("failovers") == 0);
  CHECK(j.at("duplicates") == 0);
  CHECK(j.at("seed") == 1);
}

TEST_CASE("railcheck run exits 1 when the run hangs", "[cli]") {
  // A slow receiver with a time limit shorter than the stream: work is left outstanding.
  RunOptions o;
  o.scenario = temp_file("hang.toml",
                         "time_limit_ms = 100\n[workload]\nmessages = 4\nwindow = 1\nreceiver_hold_ms = 1000\n"
                         "slow_ranks = [1]\npattern = \"unidirectional\"\n");
  CHECK(cmd_run(o) == kExitViolation);
}
