#pragma once
// One authenticated direction pair between two parties that already share a context, e.g. the
// two ends of one plugin connection (issue 46): every message gets a 48-byte trailer
//
//   offset from the trailer start
//        0    4 key_id   JobKey::key_id() of the sender's key
//        4    4 sender   the sender's party number (e.g. 0 the connecting side, 1 the listener)
//        8    8 seq      the sender's counter on this channel: 1, 2, 3, ...
//       16   32 tag      HMAC-SHA-256 of: domain | binding | receiver u32 | message | key_id, sender, seq
//
// The binding is what both ends know of this one connection (the listener's handle bytes), so
// a message cannot be carried to another connection; the receiver's number is never on the wire
// (each end knows who it is). Replays are refused with a ReplayWindow, since messages may arrive
// out of order across rails. The message itself travels in clear: no confidentiality.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/auth/message_mac.hpp"
#include "engine/auth/replay_window.hpp"

namespace railcheck::auth {

constexpr std::size_t kSealTrailerBytes = 48;

enum class SealRefusal : std::uint8_t { TooShort, WrongKey, BadMac, WrongSender, Replayed };
const char* name(SealRefusal r);

struct Unsealed {
  bool ok = false;
  std::span<const std::uint8_t> message;  // ok: the bytes without the trailer
  SealRefusal refusal = SealRefusal::BadMac;
  std::string detail;  // !ok: one line, no key material
};

class SealedChannel {
 public:
  // `domain`: the protocol's own label (a tag for one protocol never verifies as another's).
  SealedChannel(const JobKey& key, std::string domain, std::vector<std::uint8_t> binding, std::uint32_t me,
                std::uint32_t peer);

  // Appends the trailer to `message`.
  void seal(std::vector<std::uint8_t>& message);
  // Checks and strips the trailer of a message from the peer.
  Unsealed open(std::span<const std::uint8_t> sealed);

 private:
  MessageMac mac_;
  std::string domain_;
  std::vector<std::uint8_t> binding_;
  std::uint32_t me_;
  std::uint32_t peer_;
  std::uint64_t next_seq_ = 1;
  ReplayWindow window_;
};

}  // namespace railcheck::auth
