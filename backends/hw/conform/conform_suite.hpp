#pragma once
// `railcheck conform --transport fabric` (issue 7 item 4): the conformance suite between two
// processes. This process is the receiving side of every case; it starts its peer (the same
// executable, `conform --peer-fd N`) which connects and sends. Each case is a verifiable
// message stream (message_stream.hpp); a case passes only when both sides say so.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::conform {

class NetnsLab;

struct SuiteOptions {
  std::string provider = "tcp;ofi_rxm";
  std::vector<std::size_t> sizes;  // send/recv sizes; empty = 0 B, 1 B, 4 KiB, 64 KiB, 1 MiB, 64 MiB
  std::uint64_t seed = 1;
  std::string self_exe = "/proc/self/exe";  // what to exec as the peer
  // Run in the lab's two network namespaces, joined by two veth pairs, one per rail, and add
  // the real link failure: rail 0's link taken down mid-stream. The caller owns the lab.
  const NetnsLab* netns = nullptr;
};

// The peer's side of the suite, as `conform --peer-fd` starts it.
struct PeerOptions {
  int fd = -1;
  std::string provider = "tcp;ofi_rxm";
  std::vector<std::string> rail_addresses;  // empty: the provider's default (loopback for tcp)
  std::string cut_link;                     // the interface a link-down case takes down
};

struct CaseResult {
  std::string name;
  bool passed = false;
  double millis = 0;
  std::string detail;  // why it failed, or what was measured
};

// Runs every case; an error only when the suite could not run at all (no provider, no peer).
Result<std::vector<CaseResult>> run_suite(const SuiteOptions& o);

// The peer's side: reads cases from `fd` until EOF and runs the sending half of each.
// Returns the process exit code.
int run_peer(const PeerOptions& o);

std::vector<std::size_t> default_sizes();

}  // namespace railcheck::conform
