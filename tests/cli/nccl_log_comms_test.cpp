// Logs of several communicators (nccl_log_comms.hpp) on a real run: scenarios/triage's
// healthy_groups-r4 (PyTorch 2.11, NCCL 2.28.9: the world and an even and an odd subgroup made
// by ncclCommSplit) splits into its three communicators, each of which the importer takes.
#include "engine/plan/nccl_log_comms.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "support/test_files.hpp"

namespace railcheck::plan {
namespace {

std::vector<LogFile> group_logs() {
  std::vector<LogFile> logs;
  for (int r = 0; r < 4; ++r) {
    const auto p = test::source_path("scenarios/triage/healthy_groups-r4/nccl_rank" + std::to_string(r) + ".log");
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    logs.push_back(LogFile{p, s.str()});
  }
  return logs;
}

TEST_CASE("log communicators: a world and two splits are told apart by commId and color", "[plan][log]") {
  const auto logs = group_logs();
  REQUIRE_FALSE(import_nccl_logs(logs).ok());  // one communicator at a time, as before
  const auto comms = split_by_communicator(logs);
  REQUIRE(comms.size() == 3);
  CHECK(comms[0].id.rfind("commId 0x", 0) == 0);
  CHECK(comms[0].nranks == 4);
  for (int i = 1; i < 3; ++i) {
    CHECK(comms[i].nranks == 2);
    CHECK(comms[i].id.rfind("split of " + comms[0].id + ", color ", 0) == 0);
  }
  for (const auto& c : comms) {
    INFO(c.id);
    CHECK(c.operations == 4);  // each member rank logged two all-reduces on it
    auto imported = import_nccl_logs(c.files);
    REQUIRE(imported.ok());
    CHECK(imported->input.shape.nranks == c.nranks);
  }
  CHECK_THAT(describe(comms), Catch::StartsWith("3 communicators: commId 0x"));
}

TEST_CASE("log communicators: one communicator's logs pass through unchanged", "[plan][log]") {
  const auto p = test::source_path("scenarios/triage/healthy-r2/nccl_rank0.log");
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  const std::vector<LogFile> logs{LogFile{p, s.str()}};
  const auto comms = split_by_communicator(logs);
  REQUIRE(comms.size() == 1);
  CHECK(comms[0].files[0].text == logs[0].text);
  CHECK(comms[0].nranks == 2);
}

TEST_CASE("replay-sched: logs of several communicators replay the busiest, or the one --comm names", "[plan][log]") {
  cli::ReplaySchedOptions o;
  for (const auto& l : group_logs()) o.inputs.push_back(l.name);
  o.policies = {"nccl"};
  CHECK(cli::cmd_replay_sched(o) == cli::kExitOk);
  o.comm = "color";  // both splits have one
  CHECK(cli::cmd_replay_sched(o) == cli::kExitBadInput);
  o.comm = "no-such-communicator";
  CHECK(cli::cmd_replay_sched(o) == cli::kExitBadInput);
}

}  // namespace
}  // namespace railcheck::plan
