// Where NCCL_ALGO / NCCL_PROTO come from (engine/plan/nccl228_algo_proto_env): the option, the
// logs' ENV lines (src/graph/tuning.cc ncclTopoTuneModel's INFO(NCCL_ENV, ...)), env.txt, in that
// order per variable; a printed TUNING table that contradicts them is reported and kept.
#include "engine/plan/nccl228_algo_proto_env.hpp"

#include <catch2/catch.hpp>

#include "engine/plan/nccl228_cost_table.hpp"
#include "engine/plan/nccl228_enable_list.hpp"

using namespace railcheck::plan;

namespace {

const std::size_t kAllReduceRow = static_cast<std::size_t>(func_index(CollOp::AllReduce));
constexpr std::string_view kEnvLog =
    "vm:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL128\n"
    "vm:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n";
constexpr std::string_view kEnvTxt =
    "# date 2026-11-26T00:45:37Z\n# env NCCL_DEBUG=INFO NCCL_PROTO=LL NCCL_ALGO=Tree NCCL_HOSTID=host<r / 2> (per "
    "rank)\n";

AlgoProtoSettings option(std::string_view text) {
  auto s = settings_from_option(text, "--nccl-env");
  REQUIRE(s.ok());
  return s.value();
}

}  // namespace

TEST_CASE("NCCL_ALGO / NCCL_PROTO sources: option over the logs' ENV lines over env.txt, per variable",
          "[plan][tuner][env]") {
  const std::vector<NamedLog> logs = {{"rank0.log", kEnvLog}, {"rank1.log", kEnvLog}};
  const NamedLog env{"env.txt", kEnvTxt};
  CommShape s;
  auto from_env = apply_algo_proto_env({}, {}, env, s);
  REQUIRE(from_env.ok());
  CHECK(s.v228.enable.proto[kAllReduceRow] == std::array<std::int8_t, kNumProtocols>{1, 0, 0});
  CHECK(s.v228.enable.algo[kAllReduceRow][kAlgoRing] == 0);
  auto from_log = apply_algo_proto_env({}, logs, env, s);
  REQUIRE(from_log.ok());
  CHECK(s.v228.enable.proto[kAllReduceRow] == std::array<std::int8_t, kNumProtocols>{0, 1, 0});
  CHECK(s.v228.enable.algo[kAllReduceRow][kAlgoTree] == 0);
  CHECK_THAT(from_log->notes.at(0), Catch::Contains("NCCL_PROTO=LL128") && Catch::Contains("rank0.log:1"));
  auto from_option = apply_algo_proto_env(option("NCCL_PROTO=Simple"), logs, env, s);
  REQUIRE(from_option.ok());
  CHECK(s.v228.enable.proto[kAllReduceRow] == std::array<std::int8_t, kNumProtocols>{0, 0, 1});
  CHECK(s.v228.enable.algo[kAllReduceRow][kAlgoTree] == 0);  // NCCL_ALGO still the log's
  auto none = apply_algo_proto_env({}, {}, std::nullopt, s);
  REQUIRE(none.ok());
  CHECK(none->notes.empty());
  CHECK(s.v228.enable == AlgoProtoEnable{});
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO sources: bad text, other variables and disagreeing logs are errors",
          "[plan][tuner][env]") {
  auto typo = settings_from_option("NCCL_PROTO=LL,Simpel", "--nccl-env");
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(typo.error().what, Catch::Contains("--nccl-env") && Catch::Contains("NCCL_PROTO=\"LL,Simpel\""));
  CHECK_FALSE(settings_from_option("NCCL_MAX_NCHANNELS=4", "--nccl-env").ok());
  CHECK_FALSE(settings_from_option("LL", "--nccl-env").ok());
  CHECK_FALSE(settings_from_option("NCCL_ALGO=Ring NCCL_ALGO=Tree", "--nccl-env").ok());
  CommShape s;
  const std::string other = "vm:1:1 [1] NCCL INFO NCCL_PROTO set by environment to Simple\n";
  auto split = apply_algo_proto_env({}, {{"rank0.log", kEnvLog}, {"rank1.log", other}}, std::nullopt, s);
  REQUIRE_FALSE(split.ok());
  CHECK_THAT(split.error().what, Catch::Contains("rank0.log:1") && Catch::Contains("rank1.log:1"));
  auto resolved = apply_algo_proto_env(option("NCCL_PROTO=LL"), {{"rank0.log", kEnvLog}}, std::nullopt, s);
  CHECK(resolved.ok());
  auto bad_log = apply_algo_proto_env({}, {{"rank0.log", "x [0] NCCL INFO NCCL_ALGO set by environment to Rang\n"}},
                                      std::nullopt, s);
  REQUIRE_FALSE(bad_log.ok());
  CHECK_THAT(bad_log.error().what, Catch::Contains("rank0.log:1") && Catch::Contains("\"Rang\""));
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO against a printed TUNING table: the table wins and the report says so",
          "[plan][tuner][env]") {
  CommShape s;
  CostTables printed;
  printed.printed = true;
  printed.bandwidth[kAllReduceRow][kAlgoRing][kProtoLL] = 2.4f;
  s.v228.costs = printed;
  auto agree = apply_algo_proto_settings(option("NCCL_PROTO=LL"), s);
  REQUIRE(agree.ok());
  CHECK(agree->conflicts.empty());
  auto clash = apply_algo_proto_settings(option("NCCL_PROTO=Simple"), s);
  REQUIRE(clash.ok());
  REQUIRE(clash->conflicts.size() == 1);
  CHECK_THAT(clash->conflicts[0], Catch::Contains("AllReduce Ring/LL"));
  CHECK(s.v228.costs->bandwidth[kAllReduceRow][kAlgoRing][kProtoLL] == 2.4f);
}
