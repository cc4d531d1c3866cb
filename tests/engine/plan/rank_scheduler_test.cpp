// One rank's plan loop (engine/plan/rank_scheduler.hpp): channel loads accumulate within a
// plan, the work budget cuts plans, p2p goes to its mapped channels after the collectives.
#include "engine/plan/rank_scheduler.hpp"

#include <catch2/catch.hpp>

#include "engine/plan/channel_count.hpp"
#include "engine/plan/p2p_channels.hpp"

namespace railcheck::plan {
namespace {

CollTask allreduce(std::uint64_t count, std::uint32_t channels) {
  CollTask t;
  t.count = count;
  t.dtype = DataType::Float32;
  t.channels = channels;
  return t;
}

CommShape shape4() { return CommShape{.nranks = 4, .coll_channels = 4, .p2p_channels = 4, .p2p_channels_per_peer = 2}; }

RankSchedule run(const CommShape& shape, std::string_view policy, const std::vector<TaskGroup>& groups,
                 std::uint32_t rank = 0) {
  RankScheduler s(shape, policy_by_name(policy).value(), rank);
  for (const auto& g : groups) REQUIRE(s.launch(g).ok());
  return s.take();
}

TEST_CASE("successive collectives in one plan go to the least-loaded channels", "[plan][scheduler]") {
  TaskGroup g;
  g.colls = {allreduce(1024, 1), allreduce(1024, 1), allreduce(512, 2)};
  const auto s = run(shape4(), "nccl", {g});
  REQUIRE(s.plans.size() == 1);
  REQUIRE(s.colls.size() == 3);
  CHECK(s.colls[0].channels == std::vector<std::uint32_t>{0});
  CHECK(s.colls[1].channels == std::vector<std::uint32_t>{1});  // ch0 carries 4096 B now
  CHECK(s.colls[2].channels == std::vector<std::uint32_t>{2, 3});
  CHECK(s.colls[1].loads_before == std::vector<std::uint64_t>{4096, 0, 0, 0});
  CHECK(s.plans[0].channels[0].coll_bytes == 4096);
  CHECK(s.plans[0].channels[2].coll_bytes == 1024);
  CHECK(s.plans[0].channel_mask() == 0b1111);  // finishPlan: one block per channel with work
}

TEST_CASE("a non-persistent plan holds at most half the work FIFO and the next plan starts with fresh loads",
          "[plan][scheduler]") {
  CommShape shape = shape4();
  shape.work_fifo_depth = 4;  // budget 2 work items per plan
  TaskGroup g;
  g.colls = {allreduce(1024, 1), allreduce(1024, 1), allreduce(1024, 1)};
  const auto s = run(shape, "nccl", {g});
  REQUIRE(s.plans.size() == 2);
  CHECK(s.plans[0].work_items == 2);
  CHECK(s.plans[1].channel_mask() == 0b0001);
  CHECK(s.colls[2].plan == 1);
  CHECK(s.colls[2].channels == std::vector<std::uint32_t>{0});
}

TEST_CASE("a persistent plan has no budget limit", "[plan][scheduler]") {
  CommShape shape = shape4();
  shape.work_fifo_depth = 4;
  shape.persistent = true;
  TaskGroup g;
  g.colls = {allreduce(1024, 1), allreduce(1024, 1), allreduce(1024, 1)};
  CHECK(run(shape, "nccl", {g}).plans.size() == 1);
}

TEST_CASE("a task larger than an empty plan's budget is an error, not a loop", "[plan][scheduler]") {
  CommShape shape = shape4();
  shape.work_fifo_depth = 2;  // budget 1
  RankScheduler s(shape, policy_by_name("nccl").value(), 0);
  TaskGroup g;
  g.colls = {allreduce(1024, 2)};
  auto r = s.launch(g);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("budget"));
}

TEST_CASE("p2p channels follow the peer round and the mirrored part index", "[plan][p2p]") {
  const CommShape s = shape4();
  CHECK(p2p_round_of_send(0, 1, 4) == 1);
  CHECK(p2p_round_of_recv(1, 0, 4) == 1);  // both ends of 0 -> 1 are in round 1
  CHECK(p2p_channel(s, 1, 0) == 1);
  CHECK(p2p_channel(s, 1, 1) == 3);  // mirrorBits(1, 2) = 2
  CHECK(p2p_channel(s, 3, 1) == 1);  // (3 + 2) & 3
  CHECK(p2p_parts(s, 1) == 1);
  CHECK(p2p_parts(s, 4 << 20) == 2);  // capped at p2p_channels_per_peer
}

TEST_CASE("under nccl, p2p is placed after every collective, send and receive of a round together",
          "[plan][scheduler]") {
  TaskGroup g;
  g.p2ps = {P2pTask{P2pDir::Send, 1, 4096, 0}, P2pTask{P2pDir::Recv, 3, 4096, 0}};
  g.colls = {allreduce(1024, 1)};
  const auto s = run(shape4(), "nccl", {g});
  REQUIRE(s.plans.size() == 1);
  const auto& ch1 = s.plans[0].channels[1].work;
  REQUIRE(ch1.size() == 1);
  CHECK(ch1[0].kind == WorkItem::Kind::P2p);
  CHECK(ch1[0].send.peer == 1);
  CHECK(ch1[0].recv.peer == 3);  // round 1 pairs send to rank+1 with recv from rank-1
  CHECK(s.plans[0].channels[0].work.front().kind == WorkItem::Kind::Coll);
  CHECK(s.colls[0].loads_before == std::vector<std::uint64_t>{0, 0, 0, 0});
}

TEST_CASE("under passsm, pre-scheduled p2p stays out of the plans but loads its channels", "[plan][scheduler]") {
  TaskGroup g;
  g.p2ps = {P2pTask{P2pDir::Send, 0, 8192, 0}, P2pTask{P2pDir::Recv, 0, 8192, 0}};  // self, round 0
  g.colls = {allreduce(1024, 1)};
  const auto s = run(shape4(), "passsm", {g});
  CHECK(s.colls[0].loads_before == std::vector<std::uint64_t>{16384, 0, 0, 0});
  CHECK(s.colls[0].channels == std::vector<std::uint32_t>{1});
  CHECK(s.plans[0].work_items == 1);

  g.p2p_done_before_end = true;  // the copies finished first: no load left
  CHECK(run(shape4(), "passsm", {g}).colls[0].channels == std::vector<std::uint32_t>{0});
}

TEST_CASE("a peer outside the communicator is an error", "[plan][scheduler]") {
  RankScheduler s(shape4(), policy_by_name("nccl").value(), 0);
  TaskGroup g;
  g.p2ps = {P2pTask{P2pDir::Send, 9, 1, 0}};
  auto r = s.launch(g);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("peer 9"));
}

TEST_CASE("an unknown policy names the known ones", "[plan][policy]") {
  auto p = policy_by_name("fifo");
  REQUIRE_FALSE(p.ok());
  CHECK_THAT(p.error().hint, Catch::Contains("nccl") && Catch::Contains("passsm"));
}

TEST_CASE("without a channel count, a collective gets divUp(bytes, bytePerChannel) channels", "[plan][channels]") {
  const CommShape s{.nranks = 8, .coll_channels = 4};
  // 2 MiB * min(16, 8) = 16 MiB halves while 4 MiB of collectives would not fill 4 channels:
  // 16 -> 8 -> 4 -> 2 -> 1 MiB (4 MiB < 4 * 1 MiB is false).
  const auto per = bytes_per_channel(s, 4 << 20);
  CHECK(per == (1 << 20));
  CollTask big;
  big.count = 1 << 20;  // float32: 4 MiB
  CHECK(coll_channel_count(s, big, per) == 4);
  CollTask small;
  small.count = 1 << 16;  // 256 KiB
  CHECK(coll_channel_count(s, small, per) == 1);
  small.channels = 3;  // the trace's own count wins, capped at nChannels
  CHECK(coll_channel_count(s, small, per) == 3);
  CHECK(bytes_per_channel(s, 0) == kMinChannelSize);  // halving stops at NCCL_MIN_CHANNEL_SIZE
}

}  // namespace
}  // namespace railcheck::plan
