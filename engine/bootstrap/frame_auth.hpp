#pragma once
// Authenticated bootstrap frames, wire format v2 (issue 46, docs/security.md). A v2 frame is a
// v1 frame (bootstrap_codec.hpp) whose version byte is 2, followed by a 56-byte trailer:
//
//   offset from the trailer start
//        0    4 sender       the sending rank, or kFromRoot (0xFFFFFFFF) for the root
//        4    4 key_id       JobKey::key_id() of the sender's key
//        8    8 incarnation  a random number the sending process drew when it started
//       16    8 seq          the sender's frame counter: 1, 2, 3, ... over everything it sends
//       24   32 tag          HMAC-SHA-256 under the job key of
//                            "railcheck bootstrap v2" | receiver u32 | frame bytes | trailer[0, 24)
//
// The MAC covers the content, the run id (in the header), the sender, the sequence number and
// the receiver (never on the wire: each side knows who it is), so a frame cannot be forged,
// altered, replayed to the same receiver, redirected to another, or carried into another job.
// Confidentiality is not a goal: payloads travel in clear (docs/security.md says so).
//
// FrameAuth is one identity's state (a rank, or the root): its key, its own counter, and which
// counters it has taken from each sender incarnation (a ReplayWindow: each at most once). The
// incarnation keeps two processes started with the same rank apart: the second one's frames are
// not replays of the first's, so the root sees both check-ins and rejects the duplicate rank, as
// it does without a key; a replayed frame repeats its incarnation and counter and is refused. A sender's frames
// to one receiver mostly share one TCP connection, but not always (with two ranks, rank 1's ring
// successor and predecessor are both rank 0), so they may arrive out of counter order. Frames that fail any check come back as a FrameRefusal (with the bytes they
// took), never as an Error: a stranger's frame is dropped and the run goes on. An Error is left
// for bytes that are not a frame at all (the stream has lost its framing) and for an authentic
// frame whose payload is malformed (a peer with the key that breaks the protocol).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <map>
#include <utility>
#include <vector>

#include "engine/auth/message_mac.hpp"
#include "engine/auth/replay_window.hpp"
#include "engine/bootstrap/bootstrap_message.hpp"
#include "engine/core/result.hpp"

namespace railcheck::bootstrap {

namespace auth_wire {
constexpr std::uint8_t kVersion = 2;
constexpr std::size_t kTrailerSize = 56;
constexpr std::size_t kSenderOffset = 0;
constexpr std::size_t kKeyIdOffset = 4;
constexpr std::size_t kIncarnationOffset = 8;
constexpr std::size_t kSeqOffset = 16;
constexpr std::size_t kTagOffset = 24;
}  // namespace auth_wire

enum class RefusalReason : std::uint8_t {
  Unauthenticated,  // a v1 frame (no MAC): a peer running without a key, or a stranger
  WrongKey,         // the sender's key id is not ours: another job's key, or a wrong key file
  BadMac,           // our key id, but the tag does not verify: forged or altered on the way
  OtherRun,         // authentic, but for another run id (the same key reused by another job)
  Replayed,         // authentic, but its counter was already taken from that sender (or is too old)
  Impersonation,    // authentic, but the message names another sender than the trailer
                    // (a rank with the key posing as another is out of scope, docs/security.md;
                    // this catches a confused or buggy one)
};
const char* name(RefusalReason r);

struct FrameRefusal {
  RefusalReason reason = RefusalReason::BadMac;
  std::string detail;  // one line; never holds key material
  std::uint64_t run_id = 0;  // the header's run id, as sent (unauthenticated unless OtherRun/Replayed)
  // The v1 frame itself when reason is Unauthenticated and it decodes: the driver may take the
  // root's unauthenticated refusal of this rank's join (is_join_refusal) and nothing else.
  std::optional<Frame> unauthenticated;
};

struct OpenedFrame {
  std::size_t consumed = 0;
  std::uint32_t sender = 0;            // valid when frame is set
  std::optional<Frame> frame;          // set: authentic and fresh
  std::optional<FrameRefusal> refusal; // set: dropped, and why
};

class FrameAuth {
 public:
  // `me`: this identity's rank, or kFromRoot for the root. `incarnation`: drawn at random by the
  // driver once per process (the engine draws nothing itself).
  FrameAuth(const auth::JobKey& key, std::uint64_t run_id, std::uint32_t me, std::uint64_t incarnation);

  // The v2 bytes of `frame` from this identity to `to` (a rank, or kFromRoot).
  std::vector<std::uint8_t> seal(std::uint32_t to, const Frame& frame);
  // The frame at the front of `buffered`: nullopt while incomplete.
  Result<std::optional<OpenedFrame>> open(std::span<const std::uint8_t> buffered);

  std::uint32_t me() const { return me_; }

 private:
  FrameRefusal check_fresh(std::uint32_t sender, std::uint64_t incarnation, std::uint64_t seq, const Frame& frame);

  auth::MessageMac mac_;
  std::uint64_t run_id_;
  std::uint32_t me_;
  std::uint64_t incarnation_;
  std::uint64_t next_seq_ = 1;
  std::map<std::pair<std::uint32_t, std::uint64_t>, auth::ReplayWindow> taken_;  // per sender incarnation
};

// The sender a message names in its own fields, if it names one (CheckIn.rank, RingHello and
// RingDone's from_rank; the root for RingNeighbour). RingBlock names none, and an Abort names
// who aborted, not who forwards it (aborts travel the ring and the root relays them).
std::optional<std::uint32_t> claimed_sender(const Message& m);

// The one unauthenticated frame a rank takes, on its root connection and only while checking
// in: the root's Abort saying it could not authenticate this rank's check-in (wrong key, other
// run, no key). Without it a rank with a wrong key would wait for its deadline; a forger who
// can inject into that TCP connection can only make the join fail, which it could do anyway by
// resetting the connection.
bool is_join_refusal(const Frame& f);

// The root's answer to the first frame of a check-in connection when it refused it, sent
// unauthenticated (v1: the rank cannot verify a MAC under a key it does not hold), in the
// refused frame's run id so that rank reads it. nullopt for refusals that say nothing about the
// sender's key (a replay, an altered frame: an attacker's, whose connection is simply closed).
std::optional<Frame> join_refusal(const FrameRefusal& refusal);

}  // namespace railcheck::bootstrap
