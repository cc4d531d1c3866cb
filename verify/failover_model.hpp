#pragma once
// What the failover world explores: how many paths and messages, which faults the network may
// inject, and how many of each (the bound). `railcheck check model.toml` reads one of these
// (verify/check_spec_loader.cpp); docs/verify.md lists every key.
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/time.hpp"
#include "engine/failover/ha_tunables.hpp"
#include "verify/mutation.hpp"

namespace railcheck::verify {

struct FailoverModel {
  std::string name = "failover";
  // ---- the world ----
  std::uint32_t paths = 3;          // paths per connection; path p runs over rail p of both ranks
  std::uint32_t messages = 3;       // messages per connection
  bool bidirectional = true;        // two connections (rank 0 -> 1 and rank 1 -> 0) sharing the rails
  std::uint32_t recv_group = 1;     // buffers per grouped irecv; must divide `messages`
  bool ordered = true;              // RC: data FIFO per QP; false: SRD-like, any order
  bool delay_recv_completions = true;  // the receiver's CQEs are polled as separate steps
  bool interleave_user_calls = false;  // isend/irecv as choices (else all posted once the comm is up)
  bool faults_during_handshake = false;  // allow faults before every path of every connection is up
  // Run the senders' rail-liveness detectors (engine/failover/rail_liveness.hpp): a probe on a
  // live rail is answered in the same step (the peer's NIC, no CPU), on a dead one it is lost.
  // Off, the engines' `liveness` tunable is overridden to false (this world's standard bounds).
  bool probes = false;
  // ---- the bound: how many of each nondeterministic fault ----
  std::uint32_t link_failures = 2;  // rails that die (for good unless repaired)
  std::uint32_t link_repairs = 0;   // rails that come back
  std::uint32_t losses = 2;         // single packets, ACKs or control messages lost on a live rail
  std::uint32_t timer_races = 2;    // timers that fire while network work is still pending
  Nanos horizon = sec(60);          // simulated time after which pending work counts as a hang
  // ---- the engine ----
  HaTunables tunables;
  Mutation mutation = Mutation::None;  // a deliberately broken engine variant (tests, docs)
};

// The bound that docs/verify.md calls standard: 2 ranks, 3 paths, 3 messages each way, 2 rail
// failures, 2 losses, reordering of in-flight packets (within RC's per-QP order).
FailoverModel standard_bound(ReplayPolicy policy);

// One line, for reports: "resync, 3 paths, 3 msgs each way, 2 failures, 2 losses, ...".
std::string describe(const FailoverModel& m);

}  // namespace railcheck::verify
