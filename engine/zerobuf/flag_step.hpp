#pragma once
// One step of a rank's collective program (zbccl seed §4.3, §5.3): the flag protocol written out
// as a flat list of plain records that the host state machine (rank_runner.hpp), the model
// checker (verify/zerobuf) and the CUDA kernel (backends/hw/cuda/zerobuf) all execute the same
// way. Plain data only (fixed-width fields, no pointers): the CUDA driver copies a program to
// the device as is, and nvcc compiles this header.
//
// Every rank owns a flag area at the start of its window (flag_layout.hpp) with one 16-byte slot
// per (flag kind, peer), written only by that peer: { offset, epoch }. A peer publishes a buffer
// by storing the offset, fencing, then storing the epoch; a waiter that sees the epoch may read
// the offset.
#include <cstdint>

#if defined(__CUDACC__)
#define RAILCHECK_HD __host__ __device__
#else
#define RAILCHECK_HD
#endif

namespace railcheck::zerobuf {

enum class FlagKind : std::uint8_t {
  Ready = 0,     // push: "my output for this epoch may be written; it is at `offset`"
  Written = 1,   // push: "I have written my part of your output"
  Posted = 2,    // pull: "my input for this epoch holds its data; read it at `offset`"
  ReadDone = 3,  // pull: "I have finished reading your input"
};
constexpr std::uint32_t kFlagKinds = 4;

enum class StepKind : std::uint8_t {
  Post,   // store {post_offset, epoch} into flag `flag` of `peer`'s area, slot of this rank
  Wait,   // until this rank's slot (flag, peer) holds an epoch the rule accepts, or time out
  Write,  // copy `bytes` from local `local_offset` to peer's window at Ready(peer).offset + remote_add
  Read,   // copy (or sum, `reduce`) `bytes` from peer's window at Posted(peer).offset + remote_add
          // into local `local_offset`
  Local,  // copy `bytes` inside this rank's window: src_offset -> local_offset
};

enum class Reduce : std::uint8_t { None = 0, SumF32 = 1 };

struct FlagStep {
  StepKind kind = StepKind::Post;
  FlagKind flag = FlagKind::Ready;
  Reduce reduce = Reduce::None;
  std::uint8_t pad = 0;
  std::uint32_t peer = 0;
  std::uint64_t epoch = 0;
  std::uint64_t local_offset = 0;  // Write: source; Read/Local: destination
  std::uint64_t src_offset = 0;    // Local: source
  std::uint64_t post_offset = 0;   // Post: the offset published with the epoch
  std::uint64_t remote_add = 0;    // Write/Read: added to the offset the peer published
  std::uint64_t bytes = 0;
};

// The wait rule, shared by every executor: epochs only grow on a communicator (one per phase of
// every collective), so a slot that reached `expected` or beyond was written for it. A peer
// cannot run a phase ahead of a waiter on the same slot (the protocol's handshakes forbid it),
// which the checker's no-flag-aba invariant holds.
RAILCHECK_HD constexpr bool flag_satisfies(std::uint64_t observed, std::uint64_t expected) {
  return observed >= expected;
}

// Flag area of one rank: kFlagKinds x nranks slots of 16 bytes, rank-major inside a kind.
struct FlagSlot {
  std::uint64_t offset;
  std::uint64_t epoch;
};
RAILCHECK_HD constexpr std::uint64_t flag_slot_offset(FlagKind k, std::uint32_t peer, std::uint32_t nranks) {
  return (static_cast<std::uint64_t>(k) * nranks + peer) * sizeof(FlagSlot);
}
RAILCHECK_HD constexpr std::uint64_t flag_area_bytes(std::uint32_t nranks) {
  return static_cast<std::uint64_t>(kFlagKinds) * nranks * sizeof(FlagSlot);
}

}  // namespace railcheck::zerobuf
