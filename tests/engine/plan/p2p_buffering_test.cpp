// A send kernel runs ahead of its receiver by its connection's buffer (NCCL_STEPS x the p2p
// chunk): the 2.28 model lets a send cycle complete when every part fits and hangs it when not,
// as real NCCL 2.28.9 did on 2xH200 (scenarios/triage/p2p_cycle-r2 completes, p2p_cycle-r4 hangs).
#include <catch2/catch.hpp>

#include "engine/plan/sched_replay.hpp"

namespace railcheck::plan {
namespace {

// Every rank sends `bytes` to the next rank, then receives from the previous one, each call its
// own launch (PyTorch's unbatched dist.send / dist.recv).
SchedInput send_cycle(std::uint32_t nranks, std::uint64_t bytes, std::uint64_t chunk, std::uint32_t per_peer) {
  SchedInput in;
  in.shape = CommShape{.nranks = nranks, .coll_channels = 2, .p2p_channels = 32, .p2p_channels_per_peer = per_peer};
  in.shape.v228.p2p_chunk_bytes = chunk;
  for (std::uint32_t r = 0; r < nranks; ++r) {
    TaskGroup send, recv;
    send.p2ps = {P2pTask{P2pDir::Send, (r + 1) % nranks, bytes, 0}};
    recv.p2ps = {P2pTask{P2pDir::Recv, (r + nranks - 1) % nranks, bytes, 0}};
    in.ranks.push_back(RankStream{r, {send, recv}});
  }
  return in;
}

ExecutionReport execute(const SchedInput& in) {
  auto r = replay(in, policy_by_name("nccl").value(), NcclVersion::V2_28);
  REQUIRE(r.ok());
  return r.value().execution;
}

TEST_CASE("p2p: a send cycle whose parts fit the connections' buffers completes", "[plan][p2p]") {
  // 64 MiB over 32 channels: 2 MiB a part, 8 x 512 KiB = 4 MiB of buffer each.
  CHECK(execute(send_cycle(2, 64u << 20, 512u << 10, 32)).completed);
  CHECK(execute(send_cycle(4, 64u << 10, 128u << 10, 2)).completed);
}

TEST_CASE("p2p: a send cycle larger than the buffers is a deadlock of every rank", "[plan][p2p]") {
  // The 4-rank recording: 2 channels per peer, 128 KiB chunks: 1 MiB of buffer against 32 MiB parts.
  const auto rep = execute(send_cycle(4, 64u << 20, 128u << 10, 2));
  REQUIRE_FALSE(rep.completed);
  REQUIRE(rep.hang.has_value());
  CHECK(rep.hang->kind == Hang::Kind::Cycle);
  CHECK(rep.hang->edges.size() == 4);
  // Twice the two-rank cycle's bytes no longer fit its buffers either.
  CHECK_FALSE(execute(send_cycle(2, 256u << 20, 512u << 10, 32)).completed);
}

TEST_CASE("p2p: a buffered send is received in order and a receive of another size never drains it", "[plan][p2p]") {
  SchedInput in = send_cycle(2, 64u << 10, 512u << 10, 2);
  in.ranks[1].groups[1].p2ps[0].bytes = 32u << 10;  // rank 1 receives less than rank 0 sent
  CHECK_FALSE(execute(in).completed);
}

}  // namespace
}  // namespace railcheck::plan
