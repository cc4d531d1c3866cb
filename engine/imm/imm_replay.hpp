#pragma once
// One-sided writes across a failover, under the replay policies of engine/failover
// (replay_policy.hpp). When a path dies, each write the sender had posted on it is in one of
// four states, and the policy decides which it posts again on the new path:
//   Naive  replays every write without a success completion, so a write that landed but lost
//          its ACK lands twice (seed §16.1's rule);
//   Probe  reads the receiver's completion record after a probe delay and replays what had not
//          landed then, so a write still in flight on the dead path when the record is read
//          lands twice;
//   Resync replays what the receiver had not seen, and the receiver drops any write sequence
//          number it has already counted. With WRITE_IMM the immediate belongs to the
//          application, so this needs a per-write sequence beside it (a completion record, or
//          spare immediate bits).
// The ImmCounter itself cannot tell a duplicate from a new write: without Resync's filter a
// duplicate either completes the expectation early (before a lost write is replayed) or is an
// over-arrival.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/failover/replay_policy.hpp"

namespace railcheck::imm {

enum class WriteFate : std::uint8_t {
  Acked,           // landed, sender saw its completion
  AckLost,         // landed, the ACK died with the path
  Lost,            // never landed
  LateOnDeadPath,  // still in flight on the dead path when the sender decided; lands afterwards
};

const char* to_string(WriteFate f);

// Sequence numbers (indexes into `fates`) the sender posts again on the new path.
std::vector<std::uint32_t> writes_to_replay(ReplayPolicy policy, std::span<const WriteFate> fates);

// The receiver's side: which arriving copies reach the ImmCounter.
class DuplicateFilter {
 public:
  DuplicateFilter(ReplayPolicy policy, std::uint32_t writes) : policy_(policy), seen_(writes, false) {}
  // True when the copy of write `seq` should be counted.
  bool admit(std::uint32_t seq);

 private:
  ReplayPolicy policy_;
  std::vector<bool> seen_;
};

}  // namespace railcheck::imm
