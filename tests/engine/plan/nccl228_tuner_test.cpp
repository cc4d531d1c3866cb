// NCCL 2.28.9's tuner in the model (engine/plan/nccl228_tuner, nccl228_tune_model,
// nccl228_cost_table): the LL channel counts of issue 27 worked out by hand from src/enqueue.cc,
// costs from a printed table by hand from src/graph/tuning.cc ncclTopoGetAlgoTime, and the
// computed tables against the ones NCCL printed.
#include "engine/plan/nccl228_tuner.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/plan/nccl228_cost_table.hpp"
#include "engine/plan/nccl228_scheduler.hpp"
#include "engine/plan/nccl228_table_inputs.hpp"
#include "engine/plan/nccl228_tune_model.hpp"
#include "engine/plan/nccl_init_tuning.hpp"
#include "tests/engine/plan/shipped_file.hpp"

using namespace railcheck::plan;

namespace {

// A recording's communicator as its INIT lines give it (ranks from the comm line).
CommShape recording_shape(const InitTuning& init, const std::string& run) {
  CommShape s;
  InitTuning comm = init;
  comm.costs.reset();
  apply_init_tuning(comm, s);
  const std::string log = shipped_file("scenarios/groundtruth/" + run + "/rank0.log");
  const auto at = log.find(" nRanks ");
  s.nranks = static_cast<std::uint32_t>(std::stoul(log.substr(at + 8)));
  return s;
}

CommShape tuner_shape(std::uint32_t nodes, std::uint32_t channels) {
  CommShape s;
  s.nranks = 2;
  s.coll_channels = channels;
  s.p2p_channels = channels >= 16 ? 16 : channels;
  s.p2p_channels_per_peer = 2;
  s.v228.nnodes = nodes;
  return s;
}

CollTask tuner_coll(CollOp op, std::uint64_t count, DataType t, const char* algo = "", const char* proto = "") {
  CollTask c;
  c.op = op;
  c.count = count;
  c.dtype = t;
  c.algorithm = algo;
  c.protocol = proto;
  return c;
}

// The channels of one collective launched alone, on rank 0 (both ranks issue it).
std::vector<std::uint32_t> lone_channels(const CommShape& s, const CollTask& c) {
  TaskGroup g;
  g.colls = {c};
  auto r = schedule_all_2_28(s, policy_by_name("nccl").value(), {RankStream{0, {g}}, RankStream{1, {g}}}, true);
  REQUIRE(r.ok());
  return r->placed[0].at(0).channels;
}

std::vector<std::uint32_t> first_n(std::uint32_t n) {
  std::vector<std::uint32_t> out(n);
  for (std::uint32_t i = 0; i < n; ++i) out[i] = i;
  return out;
}

}  // namespace

TEST_CASE("nccl 2.28 tuner: issue 27's LL channel counts, by hand from enqueue.cc", "[plan][nccl228][tuner]") {
  // The model had them right for LL and wrong only because, with no TUNING line, it assumed Ring
  // Simple (CollTask's old default) for collectives NCCL's tuner ran as LL: the thread
  // threshold (Ring LL 8 x nRanks = 16 against Simple 64) and LL's 4x traffic
  // (ncclPrepareTasks; trafficPerByte x4 in scheduleCollTasksToPlan) both change the count.
  auto nvlink = tuner_shape(1, 24);
  // NVLink: Ring Simple runs 512 threads (ncclTopoTuneModel: bwIntra x nChannels > PCI_BW).
  nvlink.v228.max_threads[kAlgoRing][kProtoSimple] = 512;
  // 98 304 B bf16 all-reduce: topoGetAlgoInfo LL drops nc while 98304 < nc x 512 x 16 -> 12;
  // cells: traffic 98304 x 2 x 4 over 12 channels = 65536 each, cellSize 2048 (16 KiB / 8),
  // 48 cells of 16 KiB traffic, 4 per channel -> lo 4 + 11 mid = 12 channels. Simple: 98304 <
  // nc x 512 x 64 -> 3.
  CHECK(lone_channels(nvlink, tuner_coll(CollOp::AllReduce, 49152, DataType::Bfloat16, "Ring", "LL")) == first_n(12));
  CHECK(lone_channels(nvlink, tuner_coll(CollOp::AllReduce, 49152, DataType::Bfloat16, "Ring", "Simple")) ==
        first_n(3));
  // 716 800 B broadcast: LL nc = min(24, 716800 / 8192 = 87.5) = 24; traffic x4 = 2 867 200 over
  // 24 = 119 466 per channel; cellSize 4096, 175 cells, 8 per channel: lo 8, 20 mid, hi 7 -> 22.
  // Simple: nc 21 (716800 / 32768), 44 cells of 16 KiB, 3 per channel: 1 + 13 + 1 = 15.
  CHECK(lone_channels(nvlink, tuner_coll(CollOp::Broadcast, 716800, DataType::Int8, "Ring", "LL")) == first_n(22));
  CHECK(lone_channels(nvlink, tuner_coll(CollOp::Broadcast, 716800, DataType::Int8, "Ring", "Simple")) == first_n(15));
  // 65 536 B all-reduce: LL nc 8 (65536 / 8192); 32 cells, 4 per channel -> 8. Simple: 2.
  CHECK(lone_channels(nvlink, tuner_coll(CollOp::AllReduce, 16384, DataType::Float32, "Ring", "LL")) == first_n(8));
  CHECK(lone_channels(nvlink, tuner_coll(CollOp::AllReduce, 16384, DataType::Float32, "Ring", "Simple")) == first_n(2));
  // Network, 2 channels: an 8 192 B (per rank) reduce-scatter has nBytes 2 x 8192 = 16384
  // (ncclFuncMaxSendRecvCount); LL: 16384 >= 2 x 512 x 16 keeps 2; traffic 8192 x 2 x 4 = 65536,
  // 32 KiB per channel, cellSize 2048, 4 cells, 2 per channel -> 2. Simple (256 threads): 1.
  const auto net = tuner_shape(2, 2);
  CHECK(lone_channels(net, tuner_coll(CollOp::ReduceScatter, 2048, DataType::Float32, "Ring", "LL")) == first_n(2));
  CHECK(lone_channels(net, tuner_coll(CollOp::ReduceScatter, 2048, DataType::Float32, "Ring", "Simple")) == first_n(1));
  // And the tuner, left to choose on one NVLink node (the computed tables), picks LL for all three.
  for (const auto& c :
       {tuner_coll(CollOp::AllReduce, 49152, DataType::Bfloat16), tuner_coll(CollOp::Broadcast, 716800, DataType::Int8),
        tuner_coll(CollOp::AllReduce, 16384, DataType::Float32)}) {
    TaskGroup g;
    g.colls = {c};
    auto r = schedule_all_2_28(nvlink, policy_by_name("nccl").value(), {RankStream{0, {g}}}, true);
    REQUIRE(r.ok());
    CHECK(r->placed[0].at(0).proto == kProtoLL);
  }
}

TEST_CASE("nccl 2.28 tuner: costs from NCCL's printed table pick its protocols", "[plan][nccl228][tuner]") {
  // scenarios/groundtruth/singles: 2 ranks, 2 nodes over NET/Socket, 2 channels.
  const auto text = shipped_file("scenarios/groundtruth/singles/rank0.log");
  auto shape = tuner_shape(2, 2);
  auto taken = apply_init_logs({{"rank0.log", text}}, shape);
  REQUIRE(taken.ok());
  REQUIRE(shape.v228.costs.has_value());
  CHECK(shape.v228.costs->printed);
  const int ar = func_index(CollOp::AllReduce);
  // 32 KiB: Ring LL 16.6 + 32768 / (1000 x 0.6) = 71.21 us; Ring Simple 36.4 x 1.4 (ring plateau:
  // 2 nodes, 32768 / (2 x 2) >= 64) + 32768 / 1200 = 78.27 us.
  CHECK(algo_time_2_28(shape, ar, kAlgoRing, kProtoLL, 32768, 1) == Approx(71.213).epsilon(1e-4));
  CHECK(algo_time_2_28(shape, ar, kAlgoRing, kProtoSimple, 32768, 1) == Approx(78.267).epsilon(1e-4));
  CHECK(algo_time_2_28(shape, ar, kAlgoRing, kProtoLL128, 32768, 1) == -1.0f);  // bandwidth 0: disabled
  // Tree Simple: the printed 0.9 is 2 x 1.2 x .92 x .85 x .5 = 0.9384 GB/s (recomputed exactly,
  // nccl228_table_inputs), x treeCorrectionFactor[Simple][log2(32768 / 64) = 9] = .6.
  CHECK(algo_time_2_28(shape, ar, kAlgoTree, kProtoSimple, 32768, 1) ==
        Approx(36.4 + 32768 / (1000 * 0.9384 * .6)).epsilon(1e-4));
  // Aggregation: Ring pays latency per pipelined op, Tree per 10 (NCCL_MAX_DEV_WORK_BATCH_COLLS).
  CHECK(algo_time_2_28(shape, ar, kAlgoRing, kProtoLL, 0, 11) == Approx(16.6 * 11).epsilon(1e-5));
  CHECK(algo_time_2_28(shape, ar, kAlgoTree, kProtoLL, 0, 11) == Approx(16.8 * 2).epsilon(1e-5));
  auto pick = [&](std::uint64_t bytes) {
    auto t = tune_coll_2_28(shape, TuneQuery{CollOp::AllReduce, RedOp::Sum, DataType::Float32, bytes, 1});
    REQUIRE(t.ok());
    return std::make_pair(t->algo, t->proto);
  };
  CHECK(pick(32768) == std::make_pair(kAlgoRing, kProtoLL));
  CHECK(pick(262144) == std::make_pair(kAlgoRing, kProtoSimple));
}

TEST_CASE("nccl 2.28 tune model: every recording's printed tables are recomputed exactly from their topology",
          "[plan][nccl228][tuner]") {
  // The tables NCCL printed round ncclTopoTuneModel's output to 0.1; exact_tables finds the
  // topology (graph channels and bandwidths) whose computed tables round to every printed cell.
  int recomputed = 0;
  for (const auto& run : groundtruth_recordings()) {
    INFO(run);
    auto init = parse_init_tuning(shipped_file("scenarios/groundtruth/" + run + "/rank0.log"), run);
    REQUIRE(init.ok());
    REQUIRE(init->costs.has_value());
    const CommShape shape = recording_shape(init.value(), run);
    const CostTables& printed = *init->costs;
    const CostTables exact = exact_tables(shape, printed);
    CHECK(exact.recomputed);  // not the printed fallback
    for (std::size_t f = 0; f < kNumFunctions; ++f)
      for (std::size_t a = 0; a < kNumAlgorithms; ++a)
        for (std::size_t p = 0; p < kNumProtocols; ++p) {
          CHECK(exact.bandwidth[f][a][p] == Approx(printed.bandwidth[f][a][p]).margin(0.0501));
          if (printed.bandwidth[f][a][p] > 0)
            CHECK(exact.latency[f][a][p] == Approx(printed.latency[f][a][p]).margin(0.0501));
        }
    ++recomputed;
  }
  CHECK(recomputed >= 30);
}

TEST_CASE("nccl 2.28 cost table: a block that starts but does not parse is an error", "[plan][nccl228][tuner]") {
  CHECK(parse_cost_tables("x NCCL INFO hello\n", "a.log").value() == std::nullopt);
  auto bad = parse_cost_tables(
      "h:1:1 [0] NCCL INFO   Algorithm   |   Tree |\nh:1:1 [0] NCCL INFO     Broadcast |  1.0/x | 2/2 | 3/3 |\n",
      "a.log");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().what, Catch::StartsWith("a.log:2: tuning table"));
}
