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

struct SuiteOptions {
  std::string provider = "tcp;ofi_rxm";
  std::vector<std::size_t> sizes;  // send/recv sizes; empty = 0 B, 1 B, 4 KiB, 64 KiB, 1 MiB, 64 MiB
  std::uint64_t seed = 1;
  std::string self_exe = "/proc/self/exe";  // what to exec as the peer
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
int run_peer(int fd, const std::string& provider);

std::vector<std::size_t> default_sizes();

}  // namespace railcheck::conform
