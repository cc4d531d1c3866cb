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

// One rank's logs from scenarios/divergence, with the lines that match `drop` left out.
std::vector<std::string> divergence_logs(const std::string& name, const std::string& drop = "") {
  std::vector<std::string> out;
  for (int r = 0;; ++r) {
    const std::string src = source_path("scenarios/divergence/" + name + "/rank" + std::to_string(r) + ".log");
    std::ifstream in(src);
    if (!in) break;
    if (drop.empty()) {
      out.push_back(src);
      continue;
    }
    std::string kept;
    for (std::string line; std::getline(in, line);)
      if (line.find(drop) == std::string::npos) kept += line + "\n";
    out.push_back(write_temp("replay-sched-test", name + "-rank" + std::to_string(r) + ".log", kept));
  }
  return out;
}

TEST_CASE(
    "replay-sched: a real hang from one rank's NCCL_PROTO exits 1, its healthy twin 0; without the settings "
    "the hung job is inconclusive (3), never healthy",
    "[cli][plan][divergence]") {
  CHECK(run(divergence_logs("r2_proto_ll"), {"nccl"}) == kExitViolation);
  CHECK(run(divergence_logs("r2_healthy"), {"nccl"}) == kExitOk);
  // ENV lines gone: both ranks look alike, the plans agree, but the logs end mid-run.
  CHECK(run(divergence_logs("r2_proto_ll", " set by environment to "), {"nccl"}) == kExitInconclusive);
}

TEST_CASE("replay-sched: per-rank settings from --nccl-env and --env-txt make the same verdict as the ENV lines",
          "[cli][plan][divergence]") {
  const auto logs = divergence_logs("r2_proto_ll", " set by environment to ");
  ReplaySchedOptions o;
  o.inputs = logs;
  o.policies = {"nccl"};
  o.nccl_env = "1:NCCL_PROTO=LL";
  CHECK(cmd_replay_sched(o) == kExitViolation);
  o.nccl_env = "NCCL_PROTO=LL";  // every rank alike: they agree, and the job's stop stays unexplained
  CHECK(cmd_replay_sched(o) == kExitInconclusive);
  o.nccl_env.reset();
  o.env_txt = source_path("scenarios/divergence/r2_proto_ll/env.txt");
  CHECK(cmd_replay_sched(o) == kExitViolation);
  o.env_txt.reset();
  for (const char* bad : {"1:NCCL_PROTO=bogus", "NCCL_SOCKET_IFNAME=lo", "x:NCCL_PROTO=LL", "NCCL_BUFFSIZE=big",
                          "1:NCCL_PROTO=LL 1:NCCL_PROTO=Simple", "2:NCCL_PROTO=LL"}) {  // rank 2 of a 2-rank job
    INFO(bad);
    o.nccl_env = bad;
    CHECK(cmd_replay_sched(o) == kExitBadInput);
  }
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
