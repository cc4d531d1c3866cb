#pragma once
// The bootstrap's messages (seed nccl-bootstrap-walkthrough §2.4 bootstrapRoot, §3.3
// bootstrapInit). Every message travels in a frame that carries the run id (NCCL's `magic`:
// a rank only talks to the root and the ring of its own run). The wire layout is in
// bootstrap_codec.hpp; these are the decoded values.
//
// Where railcheck differs from NCCL, and why:
//   * A rank keeps its check-in connection open until the root answers on it. NCCL closes it
//     and has the root connect back to a second listener per rank; one connection lets the
//     root also answer with an Abort, so a rejected run fails on every rank instead of
//     hanging (NCCL's root only logs "rank %d of %d ranks has already checked in" and exits).
//   * Each rank announces itself on the ring with RingHello, and every ring block names its
//     step and origin, so a mis-wired ring is an error, not silently wrong handles.
//   * An Abort carries a reason code and one line of text, and is forwarded around the ring
//     in both directions (the seed's §1.2 abort broadcast), so every rank reports the cause.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace railcheck::bootstrap {

// Bounds the decoder enforces before it allocates anything.
constexpr std::uint32_t kMaxRanks = 1U << 16;
constexpr std::uint32_t kMaxBlobSize = 64U * 1024U;  // a connection handle is 128 B (NCCL_NET_HANDLE_MAXSIZE)
constexpr std::size_t kMaxAddressSize = 64;          // "255.255.255.255:65535" is 21
constexpr std::size_t kMaxReasonSize = 1024;

// The sender of an Abort that is the root rather than a rank.
constexpr std::uint32_t kFromRoot = 0xFFFFFFFFU;

// rank -> root, first message on the check-in connection. `ring_address` is where this rank
// accepts its ring predecessor's connection; the bootstrap treats it as opaque text.
struct CheckIn {
  std::uint32_t rank = 0;
  std::uint32_t nranks = 0;
  std::uint32_t blob_size = 0;
  std::string ring_address;
  bool operator==(const CheckIn&) const = default;
};

// root -> rank, once all nranks have checked in: connect to `next_rank` at `next_address`.
struct RingNeighbour {
  std::uint32_t next_rank = 0;
  std::uint32_t nranks = 0;
  std::string next_address;
  bool operator==(const RingNeighbour&) const = default;
};

// rank -> its ring successor, first message on the ring connection.
struct RingHello {
  std::uint32_t from_rank = 0;
  std::uint32_t to_rank = 0;
  bool operator==(const RingHello&) const = default;
};

// One step of the ring all-gather: at step s a rank forwards the blob of rank (me - s) mod n
// (the seed's bootstrapAllGather; nranks-1 steps in all).
struct RingBlock {
  std::uint32_t step = 0;
  std::uint32_t origin_rank = 0;
  std::vector<std::uint8_t> blob;
  bool operator==(const RingBlock&) const = default;
};

// rank -> its ring predecessor, last message before a finished rank closes: "I hold every
// blob". Only after it is a closed successor connection normal; a successor that closes
// without it has failed, and the predecessor fails too, so the news travels on (a rank that
// left before connecting cannot tell its successor anything: its predecessor must).
struct RingDone {
  std::uint32_t from_rank = 0;
  bool operator==(const RingDone&) const = default;
};

enum class AbortReason : std::uint8_t {
  Requested = 1,          // the user (or the driver, on a local error) aborted this rank
  DuplicateRank = 2,      // two check-ins claimed the same rank
  RankCountMismatch = 3,  // a check-in's nranks differs from the root's
  RankOutOfRange = 4,     // rank >= nranks
  BlobSizeMismatch = 5,   // ranks disagree on the all-gather blob size
  WrongRun = 6,           // the frame's run id is not this run's
  Timeout = 7,            // a deadline passed
  PeerLost = 8,           // a connection closed or failed before the bootstrap finished
  ProtocolError = 9,      // an unexpected or malformed message
  NotAuthenticated = 10,  // the root could not authenticate this rank's check-in (frame_auth.hpp)
};
constexpr std::uint8_t kMaxAbortReason = 10;

struct Abort {
  std::uint32_t from_rank = kFromRoot;
  AbortReason reason = AbortReason::Requested;
  std::string text;  // one line, what happened and where
  bool operator==(const Abort&) const = default;
};

using Message = std::variant<CheckIn, RingNeighbour, RingHello, RingBlock, Abort, RingDone>;

// A message as it travels: with the run id it belongs to.
struct Frame {
  std::uint64_t run_id = 0;
  Message message;
  bool operator==(const Frame&) const = default;
};

const char* name(AbortReason r);
const char* message_name(const Message& m);

}  // namespace railcheck::bootstrap
