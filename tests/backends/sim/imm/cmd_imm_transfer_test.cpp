#include <catch2/catch.hpp>

#include "cli/commands.hpp"

using namespace railcheck::cli;

TEST_CASE("railcheck imm transfer runs the presets and exits 2 on bad options") {
  ImmOptions o;
  o.mib = 8;
  for (const char* preset : {"cx7-400g", "efa-100g", "efa-200g"}) {
    o.preset = preset;
    CHECK(cmd_imm_transfer(o) == kExitOk);
  }
  o.page_kib = 64;
  o.transport = "rc";
  CHECK(cmd_imm_transfer(o) == kExitOk);
  o.transport = "udp";
  CHECK(cmd_imm_transfer(o) == kExitBadInput);
  o.transport.clear();
  o.page_kib = 16 << 10;  // a page larger than the transfer: nothing to write
  CHECK(cmd_imm_transfer(o) == kExitBadInput);
  o.page_kib = 0;
  o.mib = 0;
  CHECK(cmd_imm_transfer(o) == kExitBadInput);
  o.mib = 8;
  o.preset = "ib-800g";
  CHECK(cmd_imm_transfer(o) == kExitBadInput);
}
