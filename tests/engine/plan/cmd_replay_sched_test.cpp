// railcheck replay-sched (cli/cmd_replay_sched.cpp): exit codes on the shipped inputs and on
// bad input. Kept beside the plan tests: the subcommand is this area's front door.
#include <catch2/catch.hpp>
#include <fstream>

#include "cli/commands.hpp"
#include "support/test_files.hpp"

namespace railcheck::cli {
namespace {

using railcheck::test::source_path;
using railcheck::test::write_temp;

int run(std::vector<std::string> inputs, std::vector<std::string> policies = {},
        std::optional<std::string> nccl = std::nullopt) {
  ReplaySchedOptions o;
  o.inputs = std::move(inputs);
  o.policies = std::move(policies);
  o.nccl = std::move(nccl);
  return cmd_replay_sched(o);
}

TEST_CASE("replay-sched: the PassSm scenario exits 1, and 0 under nccl alone", "[cli][plan]") {
  CHECK(run({source_path("scenarios/sched/passsm_divergence.toml")}) == kExitViolation);
  CHECK(run({source_path("scenarios/sched/passsm_divergence.toml")}, {"nccl"}) == kExitOk);
}

TEST_CASE("replay-sched: the PassSm scenario follows its nccl = 2.18 and under --nccl 2.28 it cannot diverge",
          "[cli][plan]") {
  CHECK(run({source_path("scenarios/sched/passsm_divergence.toml")}, {"passsm"}, "2.18") == kExitViolation);
  CHECK(run({source_path("scenarios/sched/passsm_divergence.toml")}, {"passsm"}, "2.28") == kExitOk);
  CHECK(run({source_path("scenarios/sched/passsm_divergence.toml")}, {}, "2.19") == kExitBadInput);
}

TEST_CASE("replay-sched: the minimal PassSm trace exits 1 under passsm and 0 under nccl", "[cli][plan]") {
  CHECK(run({source_path("scenarios/sched/passsm_minimal.jsonl")}, {"passsm"}) == kExitViolation);
  CHECK(run({source_path("scenarios/sched/passsm_minimal.jsonl")}, {"nccl"}) == kExitOk);
}

TEST_CASE("replay-sched: the shipped trace and log replay clean under nccl", "[cli][plan]") {
  CHECK(run({source_path("scenarios/sched/two_rank.jsonl")}, {"nccl"}) == kExitOk);
  CHECK(run({source_path("scenarios/sched/two_rank_coll.log")}, {"nccl"}) == kExitOk);
}

TEST_CASE("replay-sched: bad input exits 2", "[cli][plan]") {
  CHECK(run({write_temp("replay-sched-test", "bad.jsonl", "{\"rank\":0,\"ev\":\"coll\",\"op\":\"AllReduce\"}\n")}) ==
        kExitBadInput);
  CHECK(run({write_temp("replay-sched-test", "bad.log", "h:1:1 [0] NCCL INFO Gather: opCount 0 garbage\n")}) ==
        kExitBadInput);
  CHECK(run({write_temp("replay-sched-test", "bad.toml", "[comm]\nnranks = 0\n")}) == kExitBadInput);
  CHECK(run({source_path("scenarios/sched/two_rank.jsonl")}, {"fifo"}) == kExitBadInput);
}

}  // namespace
}  // namespace railcheck::cli
