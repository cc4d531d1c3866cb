#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"

using namespace railcheck::cli;

namespace {
std::string temp_path(const std::string& name) {
  return "/tmp/railcheck-test-" + std::to_string(::getpid()) + "-" + name;
}
}  // namespace

TEST_CASE("railcheck budget exits 2 without caps, on an unknown preset, layout or a zero count", "[cli][budget]") {
  BudgetOptions o;
  CHECK(cmd_budget(o) == kExitBadInput);
  o.preset = "cx9";
  CHECK(cmd_budget(o) == kExitBadInput);
  o.preset = "cx7-400g";
  o.cq_layout = "per-qp";
  CHECK(cmd_budget(o) == kExitBadInput);
  o.cq_layout = "";
  o.channels = 0;
  CHECK(cmd_budget(o) == kExitBadInput);
  o.channels.reset();
  o.scenario = std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/short-flap.toml";
  CHECK(cmd_budget(o) == kExitBadInput);  // a scenario and a preset
}

TEST_CASE("railcheck budget --open --json writes the breakdown and the opened count", "[cli][budget]") {
  BudgetOptions o;
  o.preset = "efa-100g";
  o.channels = 8;
  o.wr_per_conn = 32;
  o.max_recvs = 4;
  o.open = true;
  o.json_path = temp_path("budget.json");
  REQUIRE(cmd_budget(o) == kExitOk);
  std::ifstream f(o.json_path);
  REQUIRE(f);
  const auto j = nlohmann::json::parse(f);
  std::remove(o.json_path.c_str());
  // 2 x 8 x 2 = 32 QPs per connection -> 8; 8 x 2 x (128 + 32) = 2560 CQEs -> 12: QPs bind.
  CHECK(j.at("max_comms") == 8);
  CHECK(j.at("binding") == "max_qp");
  CHECK(j.at("limits").at("max_cqe").at("connections") == 12);
  CHECK(j.at("seed_formula").at("max_comms") == 12);  // the seed's formula promises 12
  CHECK(j.at("opened").at("connections") == 8);
  CHECK(j.at("opened").at("refused_by") == "max_qp");
  CHECK(j.at("outcome") == "ok");
}

TEST_CASE("railcheck budget reads the NIC and the budget tunables from a scenario", "[cli][budget]") {
  const std::string path = temp_path("budget-scenario.toml");
  std::ofstream(path) << "[topology]\nnic = \"efa-100g\"\n[engine]\nexpected_channels = 4\nwr_per_conn = 16\n"
                         "max_recvs = 2\n";
  BudgetOptions o;
  o.scenario = path;
  o.json_path = temp_path("budget-scenario.json");
  REQUIRE(cmd_budget(o) == kExitOk);
  std::ifstream f(o.json_path);
  const auto j = nlohmann::json::parse(f);
  std::remove(path.c_str());
  std::remove(o.json_path.c_str());
  CHECK(j.at("usage").at("channels") == 4);
  CHECK(j.at("usage").at("wr_per_conn") == 16);
  CHECK(j.at("usage").at("max_recvs") == 2);
  CHECK(j.at("caps").at("max_qp") == 256);
  CHECK(j.contains("opened"));  // a scenario always opens: that is how the sweep runs the study
}
