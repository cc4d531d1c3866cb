// The graphs and tables the 2.28 model derives from a log's INIT lines alone (engine/plan/
// nccl228_topo_graphs, nccl228_tune_model) against what NCCL printed in every recording: the
// GRAPH lines ("Pattern 4, crossNic 0, nChannels 12, bw 30.000000/30.000000, ...") and rank 0's
// TUNING table. Neither is an input here: INIT lines give nodes, local ranks and transports.
#include "engine/plan/nccl228_topo_graphs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "engine/plan/nccl_init_tuning.hpp"
#include "tests/engine/plan/shipped_file.hpp"

using namespace railcheck::plan;

namespace {

// Rank 0's log with only what INIT lines say applied (no TUNING table, no GRAPH lines).
CommShape init_only_shape(const std::string& log, const std::string& run) {
  auto init = parse_init_tuning(log, run);
  REQUIRE(init.ok());
  init->costs.reset();
  init->max_threads.reset();
  CommShape s;
  apply_init_tuning(init.value(), s);
  s.nranks = static_cast<std::uint32_t>(std::stoul(log.substr(log.find(" nRanks ") + 8)));
  return s;
}

// The GRAPH lines, in the order init.cc computes the graphs: ring, then tree.
std::vector<TopoGraph> logged_graphs(const std::string& log) {
  std::vector<TopoGraph> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find("NCCL INFO Pattern ");
    if (at == std::string::npos) continue;
    TopoGraph g;
    int cross = 0;
    if (std::sscanf(line.c_str() + at, "NCCL INFO Pattern %d, crossNic %d, nChannels %d, bw %f/%f", &g.pattern, &cross,
                    &g.channels, &g.bw_intra, &g.bw_inter) == 5)
      out.push_back(g);
  }
  return out;
}

bool forced_algo_or_proto(const std::string& run) {
  const std::string env = shipped_file("scenarios/groundtruth/" + run + "/env.txt");
  return env.find("NCCL_ALGO=") != std::string::npos || env.find("NCCL_PROTO=") != std::string::npos;
}

}  // namespace

TEST_CASE("topo graphs: the ring and tree graphs derived from INIT lines are the ones NCCL's search logged",
          "[plan][nccl228][tuner][groundtruth]") {
  int checked = 0;
  for (const auto& run : groundtruth_recordings()) {
    const std::string log = shipped_file("scenarios/groundtruth/" + run + "/rank0.log");
    const auto logged = logged_graphs(log);
    if (logged.empty()) continue;  // recorded without NCCL_DEBUG_SUBSYS=GRAPH
    INFO(run);
    REQUIRE(logged.size() >= 2);
    const TopoFacts f = derive_topo_facts(init_only_shape(log, run));
    for (const auto& [want, got] : {std::pair{logged[0], f.ring}, std::pair{logged[1], f.tree}}) {
      CHECK(got.pattern == want.pattern);
      CHECK(got.channels == want.channels);
      CHECK(got.bw_intra == Approx(want.bw_intra));
      CHECK(got.bw_inter == Approx(want.bw_inter));
    }
    ++checked;
  }
  CHECK(checked >= 15);  // every recording of the NVLink battery
}

TEST_CASE("topo graphs: tables computed from INIT lines alone round to every table NCCL printed",
          "[plan][nccl228][tuner][groundtruth]") {
  // NCCL_ALGO / NCCL_PROTO are not in INIT lines: under them the printed table has cells turned off
  // (or LL128 turned on, which NCCL_PROTO=LL128 enables past the path check), so those cells are
  // left out there; every cell both enable must agree, and default runs must agree everywhere.
  int cells = 0, runs = 0;
  for (const auto& run : groundtruth_recordings()) {
    INFO(run);
    const std::string log = shipped_file("scenarios/groundtruth/" + run + "/rank0.log");
    auto init = parse_init_tuning(log, run);
    REQUIRE(init.ok());
    REQUIRE(init->costs.has_value());
    REQUIRE(init->max_threads.has_value());
    const CommShape shape = init_only_shape(log, run);
    const TopoFacts facts = derive_topo_facts(shape);
    const CostTables computed = tune_model_2_28(shape, facts);
    const CostTables& printed = *init->costs;
    const bool forced = forced_algo_or_proto(run);
    CHECK(ring_simple_threads(facts) == (*init->max_threads)[kAlgoRing][kProtoSimple]);
    for (std::size_t fn = 0; fn < kNumFunctions; ++fn)
      for (std::size_t a = 0; a < kNumAlgorithms; ++a)
        for (std::size_t p = 0; p < kNumProtocols; ++p) {
          const float want = printed.bandwidth[fn][a][p], got = computed.bandwidth[fn][a][p];
          INFO(fmt::format("function {} {}/{}", fn, algorithm_name(static_cast<int>(a)),
                           protocol_name(static_cast<int>(p))));
          if (forced && (want == 0 || got == 0)) continue;
          CHECK(got == Approx(want).margin(0.0501));
          if (want > 0) CHECK(computed.latency[fn][a][p] == Approx(printed.latency[fn][a][p]).margin(0.0501));
          ++cells;
        }
    ++runs;
  }
  CHECK(runs >= 30);
  CHECK(cells > 1000);
}
