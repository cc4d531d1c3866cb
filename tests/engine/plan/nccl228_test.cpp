// The NCCL 2.28.9 scheduling model (engine/plan/nccl228_*): each rule on a small case worked out
// by hand from src/enqueue.cc, then the plan loop's budget.
#include <catch2/catch.hpp>
#include <random>

#include "engine/plan/nccl228_coll_cells.hpp"
#include "engine/plan/nccl228_p2p.hpp"
#include "engine/plan/nccl228_prepare.hpp"
#include "engine/plan/nccl228_scheduler.hpp"
#include "engine/plan/sched_replay.hpp"

using namespace railcheck::plan;

namespace {

CommShape two_nodes(std::uint32_t channels = 2, std::uint32_t per_peer = 2) {
  CommShape s;
  s.nranks = 2;
  s.coll_channels = channels;
  s.p2p_channels = channels;
  s.p2p_channels_per_peer = per_peer;
  s.v228.nnodes = 2;
  return s;
}

CollTask all_reduce(std::uint64_t floats, const char* algo = "Ring", const char* proto = "Simple") {
  CollTask t;
  t.op = CollOp::AllReduce;
  t.count = floats;
  t.dtype = DataType::Float32;
  t.algorithm = algo;
  t.protocol = proto;
  return t;
}

// Channels of every collective of one group on rank 0, in issue order.
std::vector<std::vector<std::uint32_t>> coll_channels(const CommShape& s, const std::vector<CollTask>& colls) {
  TaskGroup g;
  g.colls = colls;
  auto r = schedule_all_2_28(s, policy_by_name("nccl").value(), {RankStream{0, {g}}, RankStream{1, {g}}}, true);
  REQUIRE(r.ok());
  std::vector<std::vector<std::uint32_t>> out(colls.size());
  for (const auto& p : r->placed[0]) out[p.input] = p.channels;
  return out;
}

}  // namespace

TEST_CASE("nccl 2.28: a lone collective's channels follow topoGetAlgoInfo's count", "[plan][nccl228]") {
  const auto s = two_nodes();
  // 4 KiB LL: nBytes 4096 < 2 x 512 x 16 -> 1 channel; 32 KiB LL: 2 channels poured from 0.
  CHECK(coll_channels(s, {all_reduce(1024, "Ring", "LL")})[0] == std::vector<std::uint32_t>{0});
  CHECK(coll_channels(s, {all_reduce(8192, "Ring", "LL")})[0] == std::vector<std::uint32_t>{0, 1});
  CHECK(coll_channels(two_nodes(4), {all_reduce(8192, "Ring", "LL")})[0] == std::vector<std::uint32_t>{0, 1, 2, 3});
}

TEST_CASE("nccl 2.28: coalesced collectives are poured into channels by traffic", "[plan][nccl228]") {
  const auto s = two_nodes();
  // 4 x 256 KiB: the plan's 2 MiB of traffic is 1 MiB per channel; two fill channel 0.
  const std::vector<CollTask> four(4, all_reduce(65536));
  CHECK(coll_channels(s, four) == std::vector<std::vector<std::uint32_t>>{{0}, {0}, {1}, {1}});
  // 3 x 8 MiB: 24 MiB per channel; the second straddles channels 0 and 1.
  const std::vector<CollTask> three(3, all_reduce(2097152));
  CHECK(coll_channels(s, three) == std::vector<std::vector<std::uint32_t>>{{0}, {0, 1}, {1}});
}

TEST_CASE("nccl 2.28: tasks are ordered by (function, op, type), size ascending, runs within 4x aggregate",
          "[plan][nccl228]") {
  const auto s = two_nodes();
  CollTask ag;
  ag.op = CollOp::AllGather;
  ag.count = 16384;
  ag.dtype = DataType::Float32;
  ag.algorithm = "Ring";
  ag.protocol = "Simple";
  // AllReduce 1 MiB sorts first, so AllReduce's bin comes first, walked small to large.
  auto p = prepare_colls_2_28(s, {all_reduce(262144), ag, all_reduce(1024)});
  REQUIRE(p.ok());
  REQUIRE(p->size() == 3);
  CHECK(p.value()[0].input == 2);
  CHECK(p.value()[1].input == 0);
  CHECK(p.value()[2].input == 1);
  // 4 KiB and 1 MiB are not within 4x: each decides its own channel count.
  CHECK(p.value()[0].max_channels == 1);
  CHECK(p.value()[1].max_channels == 2);
  // 64 small ones are one run: the aggregate's 256 KiB decides 2 channels for every one of them.
  auto many = prepare_colls_2_28(s, std::vector<CollTask>(64, all_reduce(1024)));
  REQUIRE(many.ok());
  CHECK(many.value()[63].max_channels == 2);
  CHECK_FALSE(prepare_colls_2_28(s, {all_reduce(1, "Bruck")}).ok());
}

TEST_CASE("nccl 2.28: p2p rounds, channel bases and splits", "[plan][nccl228]") {
  const auto s = two_nodes();
  const auto rounds = p2p_schedule_2_28(s, 1);
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0].send_to == 1);  // round 0: self
  CHECK(rounds[1].send_to == 0);
  CHECK(rounds[1].recv_from == 0);
  CHECK(p2p_channel_base_2_28(s, 1) == 1);             // reverseBits(1, log2 2)
  CHECK(p2p_channel_base_2_28(two_nodes(4), 1) == 2);  // reverseBits(1, log2 4)
  const auto range = p2p_channel_range_2_28(s);
  CHECK(range.min == 1);
  CHECK(range.max == 2);
  CHECK(p2p_split_2_28(s, range, 4096, false).channels == 1);  // LL, one part of <= 64 KiB
  CHECK(p2p_split_2_28(s, range, 4096, false).ll);
  CHECK(p2p_split_2_28(s, range, 65536, false).channels == 1);  // Simple, parts of 64..128 KiB
  CHECK(p2p_split_2_28(s, range, 262144, false).channels == 2);
  CHECK(p2p_split_2_28(s, range, -1, false).channels == 0);
  // A 16-rank, 2-node schedule visits every peer once in each direction.
  CommShape big = two_nodes(8);
  big.nranks = 16;
  const auto r16 = p2p_schedule_2_28(big, 5);
  REQUIRE(r16.size() == 16);
  std::vector<int> sends(16), recvs(16);
  for (const auto& r : r16) {
    ++sends[r.send_to];
    ++recvs[r.recv_from];
  }
  CHECK(std::count(sends.begin(), sends.end(), 1) == 16);
  CHECK(std::count(recvs.begin(), recvs.end(), 1) == 16);
}

TEST_CASE("nccl 2.28: hundreds of small collectives fit one plan and the batch estimate cuts at 1017",
          "[plan][nccl228]") {
  const auto s = two_nodes();
  TaskGroup g300, g2000;
  g300.colls.assign(300, all_reduce(256));
  g2000.colls.assign(2000, all_reduce(256));
  auto r = schedule_all_2_28(s, policy_by_name("nccl").value(), {RankStream{0, {g300, g2000}}}, true);
  REQUIRE(r.ok());
  const auto& plans = r->schedules[0].plans;
  // 300 in one plan (recorded: many_small); 2000 in two, cut where divUp(n, 4) batches of 16 B
  // would pass the 4064 B of kernel arguments (enqueue.cc scheduleCollTasksToPlan, testBudget).
  REQUIRE(plans.size() == 3);
  std::vector<int> per_plan(3);
  for (const auto& p : r->placed[0]) ++per_plan[p.plan];
  CHECK(per_plan == std::vector<int>{300, 1017, 983});
}

TEST_CASE("nccl 2.28: a send to self without its receive is an error", "[plan][nccl228]") {
  TaskGroup g;
  g.p2ps = {P2pTask{P2pDir::Send, 0, 4096, 0}};
  auto r = schedule_all_2_28(two_nodes(), policy_by_name("nccl").value(), {RankStream{0, {g}}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().what.find("to itself") != std::string::npos);
}

TEST_CASE("nccl 2.28: an empty collective gets no task and moves no channel (taskAppend)", "[plan][nccl228]") {
  // Found under ASan with random groups: a count-0 collective used to advance the pour cursor past
  // the last channel, so the next collective was placed on a channel the plan does not have.
  const auto s = two_nodes();
  auto with_empty = coll_channels(s, {all_reduce(65536), all_reduce(0), all_reduce(65536), all_reduce(65536)});
  CHECK(with_empty[1].empty());
  CHECK(with_empty[0] == std::vector<std::uint32_t>{0});
  CHECK(with_empty[3] == std::vector<std::uint32_t>{1});
  // On one channel the old cursor ended on channel 1, which does not exist.
  CHECK(coll_channels(two_nodes(1, 1), {all_reduce(0), all_reduce(65536)})[1] == std::vector<std::uint32_t>{0});
  CollTask wide = all_reduce(8192, "Ring", "LL");
  wide.channels = 40;  // a tuner's nMaxChannels is capped at the communicator's
  CHECK(coll_channels(s, {wide})[0] == std::vector<std::uint32_t>{0, 1});
}

TEST_CASE("nccl 2.28: random communicators and groups keep every rank on the same channels and every plan completes",
          "[plan][nccl228]") {
  // Seeded: a failure prints its seed and iteration; rerun with that seed to replay it.
  const std::uint64_t seed = 20261124;
  std::mt19937_64 rng(seed);
  const char* algos[] = {"Ring", "Tree", "PAT"};
  const char* protos[] = {"LL", "LL128", "Simple"};
  for (int it = 0; it < 200; ++it) {
    INFO("seed " << seed << " iteration " << it);
    CommShape s;
    s.nranks = 1 + static_cast<std::uint32_t>(rng() % 12);
    s.coll_channels = 1 + static_cast<std::uint32_t>(rng() % 8);
    s.p2p_channels = 1U << (rng() % 4);
    s.p2p_channels_per_peer = std::min<std::uint32_t>(s.p2p_channels, 1U << (rng() % 3));
    s.v228.nnodes = rng() % 2 ? s.nranks : 1;
    std::vector<CollTask> colls;
    for (int c = static_cast<int>(rng() % 10); c > 0; --c) {
      CollTask t =
          all_reduce(rng() % 5 == 0 ? 0 : (1ULL << (rng() % 24)) + rng() % 999, algos[rng() % 3], protos[rng() % 3]);
      t.op = static_cast<CollOp>(rng() % 5);
      t.dtype = static_cast<DataType>(rng() % 10);
      colls.push_back(t);
    }
    // p2p: rank r sends bytes[r][p] to every p (itself included) with probability 1/2.
    std::vector<std::vector<std::uint64_t>> bytes(s.nranks, std::vector<std::uint64_t>(s.nranks, 0));
    std::vector<std::vector<bool>> talks(s.nranks, std::vector<bool>(s.nranks, false));
    for (auto& row : bytes)
      for (auto& b : row) b = rng() % 4 == 0 ? 0 : 1ULL << (rng() % 22);
    for (auto& row : talks)
      for (std::size_t p = 0; p < row.size(); ++p) row[p] = rng() % 2 == 0;
    SchedInput in;
    in.shape = s;
    for (std::uint32_t r = 0; r < s.nranks; ++r) {
      TaskGroup g;
      g.colls = colls;
      for (std::uint32_t p = 0; p < s.nranks; ++p) {
        if (talks[r][p]) g.p2ps.push_back(P2pTask{P2pDir::Send, p, bytes[r][p], 0});
        if (talks[p][r]) g.p2ps.push_back(P2pTask{P2pDir::Recv, p, bytes[p][r], 0});
      }
      in.ranks.push_back(RankStream{r, {g, g}});
    }
    auto r = replay(in, policy_by_name("nccl").value(), NcclVersion::V2_28);
    REQUIRE(r.ok());
    CHECK_FALSE(r->agreement.first.has_value());
    CHECK(r->execution.completed);
    for (const auto& sched : r->schedules)
      for (const auto& c : sched.colls) {
        CHECK(c.channels.empty() == (c.task.count == 0));
        for (auto ch : c.channels) CHECK(ch < s.coll_channels);
      }
  }
}
