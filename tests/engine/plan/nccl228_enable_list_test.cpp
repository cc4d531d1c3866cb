// NCCL_ALGO / NCCL_PROTO in NCCL 2.28.9's grammar (engine/plan/nccl228_enable_list): the examples
// in src/graph/tuning.cc's comment above parseList, its case-insensitivity and its errors, and
// where ncclTopoTuneModel applies the result (bandwidth 0, LL128's default replaced).
#include "engine/plan/nccl228_enable_list.hpp"

#include <catch2/catch.hpp>

#include "engine/plan/nccl228_cost_table.hpp"
#include "engine/plan/nccl228_topo_graphs.hpp"
#include "engine/plan/nccl228_tune_model.hpp"
#include "engine/plan/nccl228_tuner.hpp"

using namespace railcheck::plan;

namespace {

const std::size_t kBc = static_cast<std::size_t>(func_index(CollOp::Broadcast));
const std::size_t kRed = static_cast<std::size_t>(func_index(CollOp::Reduce));
const std::size_t kAr = static_cast<std::size_t>(func_index(CollOp::AllReduce));
constexpr std::size_t kTree = kAlgoTree, kRing = kAlgoRing, kCnd = kAlgoCollNetDirect, kPat = kAlgoPat;
constexpr std::size_t kLL = kProtoLL, kLL128 = kProtoLL128, kSimple = kProtoSimple;

AlgoProtoEnable algo(std::string_view text) {
  AlgoProtoEnable e;
  REQUIRE(apply_nccl_algo(text, e).ok());
  return e;
}

AlgoProtoEnable proto(std::string_view text) {
  AlgoProtoEnable e;
  REQUIRE(apply_nccl_proto(text, e).ok());
  return e;
}

// Two ranks, one per node, over the network: LL128 is off by its path rule (PHB > PXN).
CommShape network_pair() {
  CommShape s;
  s.nranks = 2;
  s.coll_channels = 2;
  s.v228.nnodes = 2;
  return s;
}

}  // namespace

TEST_CASE("NCCL_ALGO: the source's example gives every function its own algorithms", "[plan][tuner][env]") {
  const auto e = algo("ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring");
  CHECK(e.algo[kRed] == std::array<std::int8_t, kNumAlgorithms>{0, 1, 1, 0, 0, 0, 0});
  CHECK(e.algo[kAr] == std::array<std::int8_t, kNumAlgorithms>{1, 0, 1, 0, 0, 0, 0});
  CHECK(e.algo[kBc] == std::array<std::int8_t, kNumAlgorithms>{0, 1, 0, 0, 0, 0, 0});
  CHECK(e.proto == AlgoProtoEnable{}.proto);  // NCCL_ALGO leaves the protocols alone
}

TEST_CASE("NCCL_PROTO: '^' enables every protocol but the listed, per function", "[plan][tuner][env]") {
  const auto a = proto("LL,Simple;allreduce:^LL");
  CHECK(a.proto[kRed] == std::array<std::int8_t, kNumProtocols>{1, 0, 1});
  CHECK(a.proto[kAr] == std::array<std::int8_t, kNumProtocols>{0, 1, 1});  // LL128 forced on, not "where allowed"
  const auto b = proto("^LL128;allreduce:LL128");
  CHECK(b.proto[kRed] == std::array<std::int8_t, kNumProtocols>{1, 0, 1});
  CHECK(b.proto[kAr] == std::array<std::int8_t, kNumProtocols>{0, 1, 0});
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO: names are case-insensitive, empty pieces skipped, defaults kept",
          "[plan][tuner][env]") {
  CHECK(proto("simple") == proto("SIMPLE"));
  CHECK(algo("ALLREDUCE:pat;;Broadcast:RING") == algo("allreduce:PAT;broadcast:ring"));
  CHECK(algo("Tree,,Ring") == algo("tree,ring"));
  CHECK(proto("") == AlgoProtoEnable{});
  CHECK(proto("allreduce:Simple").proto[kRed][kLL128] == 2);  // a function no section names keeps the default
  CHECK(algo("allreduce:ring:tree").algo[kAr][kTree] == 0);   // strtok_r: text after a second ':' is never read
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO: what NCCL rejects is an error naming the variable and the text",
          "[plan][tuner][env]") {
  AlgoProtoEnable e;
  auto bad_element = apply_nccl_proto("LL,Simpel", e);
  REQUIRE_FALSE(bad_element.ok());
  CHECK_THAT(bad_element.error().what, Catch::Contains("NCCL_PROTO=\"LL,Simpel\"") && Catch::Contains("\"Simpel\""));
  auto bad_function = apply_nccl_algo("allreduc:ring", e);
  REQUIRE_FALSE(bad_function.ok());
  CHECK_THAT(bad_function.error().what, Catch::Contains("NCCL_ALGO") && Catch::Contains("\"allreduc\""));
  auto no_prefix = apply_nccl_proto("LL;Simple", e);
  REQUIRE_FALSE(no_prefix.ok());
  CHECK_THAT(no_prefix.error().what, Catch::Contains("only the first may lack one"));
  CHECK_FALSE(apply_nccl_algo("ring;:", e).ok());
  CHECK_FALSE(apply_nccl_algo("nvls_tree", e).ok());  // NCCL's name is NVLSTree
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO reach the tuner as bandwidth 0 where ncclTopoTuneModel puts it",
          "[plan][tuner][env]") {
  CommShape s = network_pair();
  const TopoFacts facts = derive_topo_facts(s);
  const CostTables free = tune_model_2_28(s, facts);
  CHECK(free.bandwidth[kAr][kRing][kLL] > 0);
  CHECK(free.bandwidth[kAr][kRing][kLL128] == 0);  // the path rule
  s.v228.enable = proto("^LL");                    // LL128 now 1: on, whatever the paths
  const CostTables no_ll = tune_model_2_28(s, facts);
  CHECK(no_ll.bandwidth[kAr][kRing][kLL] == 0);
  CHECK(no_ll.bandwidth[kAr][kRing][kLL128] > 0);
  CHECK(no_ll.bandwidth[kAr][kRing][kSimple] == free.bandwidth[kAr][kRing][kSimple]);
  s.v228.enable = algo("Tree");
  s.v228.costs = tune_model_2_28(s, facts);
  CHECK(s.v228.costs->bandwidth[kAr][kRing][kSimple] == 0);
  CHECK(s.v228.costs->bandwidth[kAr][kPat][kSimple] == 0);
  CHECK(s.v228.costs->bandwidth[kAr][kTree][kSimple] > 0);
  CHECK(s.v228.costs->bandwidth[kAr][kCnd][kSimple] == 0);
  auto ar = tune_coll_2_28(s, TuneQuery{CollOp::AllReduce, RedOp::Sum, DataType::Float32, 64u << 20, 1});
  REQUIRE(ar.ok());
  CHECK(ar->algo == kAlgoTree);
  // Broadcast runs on Ring only: with Ring off NCCL fails the call (topoGetAlgoInfo), and so does the model.
  CHECK_FALSE(tune_coll_2_28(s, TuneQuery{CollOp::Broadcast, RedOp::Sum, DataType::Int8, 4096, 1}).ok());
}
