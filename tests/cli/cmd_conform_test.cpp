// railcheck conform's refusals: each is exit 2 with nothing started (no peer, no namespaces).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "backends/hw/conform/netns_lab.hpp"
#include "cli/commands.hpp"

using namespace railcheck::cli;

TEST_CASE("conform refuses --netns on shm before building any namespace", "[cli][conform]") {
  ConformOptions o;
  o.provider = "shm";
  o.netns = true;
  CHECK(cmd_conform(o) == kExitBadInput);
  // Where `ip` exists, no namespace of this process's prefix appeared (made, then removed, or not).
  if (auto list = railcheck::conform::run_ip({"netns", "list"}))
    CHECK(list.value().find(railcheck::conform::default_netns_prefix() + "a") == std::string::npos);
}

TEST_CASE("conform refuses an unknown transport", "[cli][conform]") {
  ConformOptions o;
  o.transport = "carrier-pigeon";
  CHECK(cmd_conform(o) == kExitBadInput);
}
