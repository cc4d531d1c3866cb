// `railcheck tunables` prints the engine's one table (RAILCHECK_HA_TUNABLES); with --markdown it
// prints docs/scenarios.md's [engine] table, which must be that output, line for line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/cli/railcheck_exe.hpp"

TEST_CASE("railcheck tunables --markdown is docs/scenarios.md's [engine] table", "[cli][tunables][docs]") {
  const auto dir = std::filesystem::temp_directory_path() / "railcheck-cli-tunables";
  std::filesystem::create_directories(dir);
  const auto md = exe::run_railcheck(dir, "tunables --markdown");
  const auto plain = exe::run_railcheck(dir, "tunables");
  std::filesystem::remove_all(dir);
  REQUIRE(md.code == 0);
  CHECK(md.err.empty());
  CHECK(md.out.rfind("| key | default | range | unit | variable | meaning |\n", 0) == 0);
  CHECK_THAT(md.out, Catch::Contains("| `replay_policy` | resync |"));
  CHECK_THAT(md.out, Catch::Contains("| `max_recvs` | 8 | 1 .. 8 | count | `HA_NCCL_MAX_RECVS` |"));
  const std::string docs = exe::slurp(std::filesystem::path(RAILCHECK_SOURCE_DIR) / "docs" / "scenarios.md");
  CHECK_THAT(docs, Catch::Contains(md.out));
  REQUIRE(plain.code == 0);
  CHECK_THAT(plain.out, Catch::Contains("HA_NCCL_LIVENESS_CONGESTED_RATIO"));
  CHECK_THAT(plain.out, Catch::Contains("soft RTO in force by default: 1.07"));
}
