#pragma once
// What the network-namespace lab's tests share: a lab or a skip, and forked children that can
// never hang (alarm) and never return into Catch. Anything that enters a namespace or changes
// credentials runs in such a child, so the test process itself never moves.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "backends/hw/conform/child_process.hpp"
#include "backends/hw/conform/netns_lab.hpp"

namespace railcheck::test {

inline std::string test_prefix() {
  static int counter = 0;
  return conform::default_netns_prefix() + "t" + std::to_string(++counter);
}

// Forked children that can never hang and never return into Catch (child_process.hpp).
using conform::fail_with;
using conform::fork_child;
using conform::run_in_child;
using conform::wait_child;

// Whether this machine can have a lab: root, iproute2, and a host or container that permits
// namespaces. The last is told apart by a bare `ip netns add`, so a lab that fails where
// namespaces work is a failure, not a skip.
inline bool namespaces_usable() {
  if (geteuid() != 0) {
    WARN("not root: the network-namespace lab cannot be built here");
    return false;
  }
  const std::string probe = test_prefix() + "p";
  if (auto added = conform::run_ip({"netns", "add", probe}); !added) {
    WARN("network namespaces are not available here: " << added.error().message());
    return false;
  }
  if (auto deleted = conform::run_ip({"netns", "del", probe}); !deleted) FAIL(deleted.error().message());
  return true;
}

// A lab, or nullptr (with a warning) where namespaces are not usable.
inline std::unique_ptr<conform::NetnsLab> lab_or_skip() {
  if (!namespaces_usable()) return nullptr;
  auto lab = conform::NetnsLab::create(test_prefix());
  if (!lab) FAIL(lab.error().message());
  return std::move(lab).value();
}

}  // namespace railcheck::test
