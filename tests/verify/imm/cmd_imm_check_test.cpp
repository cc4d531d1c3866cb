#include <catch2/catch.hpp>

#include "cli/commands.hpp"

using namespace railcheck::cli;

TEST_CASE("railcheck imm check exits 1 on naive replay, 0 on resync, 2 on bad options") {
  ImmOptions o;
  o.writes = 2;
  o.policy = "naive";
  CHECK(cmd_imm_check(o) == kExitViolation);
  o.policy = "resync";
  CHECK(cmd_imm_check(o) == kExitOk);
  o.policy = "eventually";
  CHECK(cmd_imm_check(o) == kExitBadInput);
  o.policy = "resync";
  o.writes = 0;
  CHECK(cmd_imm_check(o) == kExitBadInput);
}
