// Multi-rank replay (engine/plan/sched_replay.hpp): the PassSm divergence and the hang it
// causes, the nccl policy clean on the same tasks, and the shipped scenario.
#include "engine/plan/sched_replay.hpp"

#include <catch2/catch.hpp>

#include "models/sched_scenario.hpp"
#include "tests/engine/plan/shipped_file.hpp"

namespace railcheck::plan {
namespace {

// Two ranks, two channels; rank 0 copies to itself (round 0, channel 0), rank 1 does not.
// Then one all-reduce on one channel.
SchedInput self_copy_then_allreduce() {
  SchedInput in;
  in.shape = CommShape{.nranks = 2, .coll_channels = 2, .p2p_channels = 2, .p2p_channels_per_peer = 1};
  CollTask ar;
  ar.count = 1024;
  ar.channels = 1;
  TaskGroup g0;
  g0.p2ps = {P2pTask{P2pDir::Send, 0, 65536, 0}, P2pTask{P2pDir::Recv, 0, 65536, 0}};
  g0.colls = {ar};
  TaskGroup g1;
  g1.colls = {ar};
  in.ranks = {RankStream{0, {g0}}, RankStream{1, {g1}}};
  return in;
}

ReplayResult run(const SchedInput& in, std::string_view policy) {
  auto r = replay(in, policy_by_name(policy).value(), NcclVersion::V2_18);
  REQUIRE(r.ok());
  return std::move(r).value();
}

TEST_CASE("passsm: rank-local p2p loads make ranks pick different channels for one all-reduce", "[plan][replay]") {
  const auto r = run(self_copy_then_allreduce(), "passsm");
  REQUIRE(r.agreement.first.has_value());
  const auto& d = *r.agreement.first;
  CHECK(d.kind == Divergence::Kind::Channels);
  CHECK(d.coll_seq == 0);
  CHECK(d.rank_b == 1);
  CHECK(r.schedules[0].colls[0].channels == std::vector<std::uint32_t>{1});
  CHECK(r.schedules[1].colls[0].channels == std::vector<std::uint32_t>{0});
  CHECK_THAT(d.explanation, Catch::Contains("[131072, 0]") && Catch::Contains("[0, 0]"));
}

TEST_CASE("passsm: the divergent all-reduce hangs, each rank waiting on the other's channel", "[plan][replay]") {
  const auto r = run(self_copy_then_allreduce(), "passsm");
  REQUIRE_FALSE(r.execution.completed);
  REQUIRE(r.execution.hang.has_value());
  CHECK(r.execution.stuck_ranks == std::vector<std::uint32_t>{0, 1});
  CHECK(r.execution.hang->kind == Hang::Kind::Cycle);
  CHECK(r.execution.hang->edges.size() == 2);
  CHECK_THAT(r.execution.hang->describe(), Catch::Contains("AllReduce #0") && Catch::Contains("channel 1"));
}

TEST_CASE("nccl: the same tasks agree on channels and every plan completes", "[plan][replay]") {
  const auto r = run(self_copy_then_allreduce(), "nccl");
  CHECK_FALSE(r.agreement.first.has_value());
  CHECK(r.execution.completed);
  CHECK(r.execution.items_done == 3);  // the all-reduce on two ranks plus rank 0's self copy
}

TEST_CASE("ranks issuing different collectives is reported as a sequence divergence", "[plan][replay]") {
  auto in = self_copy_then_allreduce();
  in.ranks[1].groups[0].colls[0].count = 2048;
  const auto r = run(in, "nccl");
  REQUIRE(r.agreement.first.has_value());
  CHECK(r.agreement.first->kind == Divergence::Kind::Sequence);
}

TEST_CASE("a send with no matching receive is a hang on a rank that finished", "[plan][replay]") {
  SchedInput in;
  in.shape = CommShape{.nranks = 2, .coll_channels = 2, .p2p_channels = 2, .p2p_channels_per_peer = 1};
  TaskGroup g0;
  g0.p2ps = {P2pTask{P2pDir::Send, 1, 4096, 0}};
  in.ranks = {RankStream{0, {g0}}, RankStream{1, {}}};
  const auto r = run(in, "nccl");
  REQUIRE(r.execution.hang.has_value());
  CHECK(r.execution.hang->kind == Hang::Kind::StuckRank);
  CHECK(r.execution.hang->edges.front().holder == 1);
  CHECK(r.execution.hang->edges.front().holder_finished);
}

TEST_CASE("p2p_first: the plan cut moves with p2p work and ranks disagree on a later collective", "[plan][replay]") {
  auto in = self_copy_then_allreduce();
  in.shape.work_fifo_depth = 4;  // two work items per plan
  CollTask ar;
  ar.count = 1024;
  ar.channels = 1;
  for (auto& rank : in.ranks) rank.groups[0].colls = {ar, ar};
  const auto r = run(in, "p2p_first");
  REQUIRE(r.agreement.first.has_value());
  CHECK(r.agreement.first->coll_seq == 1);
  CHECK(r.schedules[0].colls[1].plan != r.schedules[1].colls[1].plan);
}

TEST_CASE("the shipped PassSm scenario hangs under passsm and runs clean under nccl", "[plan][scenario]") {
  auto sc = load_sched_scenario(shipped_file("scenarios/sched/passsm_divergence.toml"), "passsm_divergence.toml");
  REQUIRE(sc.ok());
  CHECK(sc->input.shape.nranks == 8);
  CHECK(sc->policies == std::vector<std::string>{"passsm", "nccl"});
  const auto bad = run(sc->input, "passsm");
  CHECK(bad.agreement.first.has_value());
  CHECK_FALSE(bad.execution.completed);
  const auto good = run(sc->input, "nccl");
  CHECK_FALSE(good.agreement.first.has_value());
  CHECK(good.execution.completed);
  const auto text = render_report(bad, 16, 64);
  CHECK_THAT(text, Catch::Contains("DIVERGENCE") && Catch::Contains("HANG") && Catch::Contains("r7"));
}

TEST_CASE("a scenario with an unknown key fails with file and line", "[plan][scenario]") {
  auto sc = load_sched_scenario("[comm]\nnranks = 4\nchanels = 2\n", "bad.toml");
  REQUIRE_FALSE(sc.ok());
  CHECK_THAT(sc.error().what, Catch::StartsWith("bad.toml:3"));
}

TEST_CASE("a scenario too large to replay is refused up front", "[plan][scenario]") {
  auto sc = load_sched_scenario("[comm]\nnranks = 65536\n[workload]\nsteps = 2\n[workload.all_to_all]\nbytes = 4\n",
                                "huge.toml");
  REQUIRE_FALSE(sc.ok());
  CHECK_THAT(sc.error().what, Catch::StartsWith("huge.toml:3") && Catch::Contains("p2p tasks"));
}

TEST_CASE("a scenario value out of range points at the scheduling docs", "[plan][scenario]") {
  auto sc = load_sched_scenario("[comm]\nnranks = 0\n", "bad.toml");
  REQUIRE_FALSE(sc.ok());
  CHECK_THAT(sc.error().what, Catch::StartsWith("bad.toml:2"));
  CHECK_THAT(sc.error().hint, Catch::Contains("docs/plan.md"));
}

}  // namespace
}  // namespace railcheck::plan
