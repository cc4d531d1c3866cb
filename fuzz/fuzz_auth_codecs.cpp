// The authenticated codecs (issue 46): a stranger's bytes are untrusted, and so is everything an
// attacker can do to a genuine message. The first byte picks the check, the rest is its input:
//   0  a stream of bootstrap frames opened by a rank with the job key (engine/bootstrap/frame_auth)
//   1  a genuine sealed frame with the input's edits applied: it may open only if unchanged
//   2  a control message opened on a sealed channel (engine/auth/sealed_channel)
//   3  a genuine sealed control message with the input's edits applied: likewise
//   4  the replay window: no sequence number is ever taken twice
#include <set>
#include <span>
#include <vector>

#include "engine/auth/replay_window.hpp"
#include "engine/auth/sealed_channel.hpp"
#include "engine/bootstrap/frame_auth.hpp"

namespace {

using namespace railcheck;

const auth::JobKey& key() {
  static const auth::JobKey k = auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, 0x46)).value();
  return k;
}

// Each pair of input bytes (position, xor) edits `bytes`; a zero xor is no edit.
bool apply_edits(std::vector<std::uint8_t>& bytes, std::span<const std::uint8_t> edits) {
  bool changed = false;
  for (std::size_t i = 0; i + 1 < edits.size(); i += 2) {
    const std::size_t at = edits[i] % bytes.size();
    bytes[at] ^= edits[i + 1];
    changed = changed || edits[i + 1] != 0;
  }
  // Two edits of one byte may cancel: compare, do not trust `changed` alone.
  return changed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      bootstrap::FrameAuth me(key(), 0x46, 1, 7);
      std::span<const std::uint8_t> buf = rest;
      for (int i = 0; i < 1024; ++i) {
        auto o = me.open(buf);
        if (!o || !o.value()) break;
        if (o.value()->consumed == 0 || o.value()->consumed > buf.size()) __builtin_trap();
        if (o.value()->frame.has_value() == o.value()->refusal.has_value()) __builtin_trap();
        buf = buf.subspan(o.value()->consumed);
      }
      break;
    }
    case 1: {
      bootstrap::FrameAuth sender(key(), 0x46, 0, 7);
      bootstrap::FrameAuth receiver(key(), 0x46, 1, 7);
      const auto genuine = sender.seal(1, bootstrap::Frame{0x46, bootstrap::RingBlock{0, 0, {1, 2, 3, 4}}});
      auto edited = genuine;
      apply_edits(edited, rest);
      auto o = receiver.open(edited);
      if (o && o.value() && o.value()->frame && edited != genuine) __builtin_trap();  // a forgery opened
      break;
    }
    case 2: {
      auth::SealedChannel ch(key(), "railcheck control v1", {1, 2, 3}, 1, 0);
      auto u = ch.open(rest);
      if (u.ok && u.message.size() + auth::kSealTrailerBytes != rest.size()) __builtin_trap();
      break;
    }
    case 3: {
      auth::SealedChannel a(key(), "railcheck control v1", {1, 2, 3}, 0, 1);
      auth::SealedChannel b(key(), "railcheck control v1", {1, 2, 3}, 1, 0);
      std::vector<std::uint8_t> genuine = {9, 9, 9, 9, 9, 9, 9, 9};
      a.seal(genuine);
      auto edited = genuine;
      apply_edits(edited, rest);
      if (b.open(edited).ok && edited != genuine) __builtin_trap();
      break;
    }
    case 4: {
      auth::ReplayWindow w;
      std::set<std::uint64_t> taken;
      for (std::size_t i = 0; i + 1 < rest.size(); i += 2) {
        const std::uint64_t seq = static_cast<std::uint64_t>(rest[i]) | static_cast<std::uint64_t>(rest[i + 1]) << 8;
        const bool ok = w.take(seq);
        if (ok && !taken.insert(seq).second) __builtin_trap();  // taken twice
        if (ok && seq == 0) __builtin_trap();
      }
      break;
    }
  }
  return 0;
}
