// Sealing and opening messages on one authenticated channel (sealed_channel.hpp).
#include "engine/auth/sealed_channel.hpp"

#include <fmt/format.h>

#include <array>

#include "engine/auth/little_endian.hpp"

namespace railcheck::auth {

namespace {

using Bytes = std::span<const std::uint8_t>;


}  // namespace

const char* name(SealRefusal r) {
  switch (r) {
    case SealRefusal::TooShort: return "too short for a MAC";
    case SealRefusal::WrongKey: return "wrong key";
    case SealRefusal::BadMac: return "bad MAC (forged or altered)";
    case SealRefusal::WrongSender: return "sender mismatch";
    case SealRefusal::Replayed: return "replayed";
  }
  return "unknown";
}

SealedChannel::SealedChannel(const JobKey& key, std::string domain, std::vector<std::uint8_t> binding,
                             std::uint32_t me, std::uint32_t peer)
    : mac_(key), domain_(std::move(domain)), binding_(std::move(binding)), me_(me), peer_(peer) {}

void SealedChannel::seal(std::vector<std::uint8_t>& message) {
  const std::size_t len = message.size();
  message.resize(len + kSealTrailerBytes);
  std::uint8_t* t = message.data() + len;
  put_le(t, mac_.key_id(), 4);
  put_le(t + 4, me_, 4);
  put_le(t + 8, next_seq_++, 8);
  std::array<std::uint8_t, 4> to{};
  put_le(to.data(), peer_, 4);
  const MacTag tag = mac_.tag({Bytes(reinterpret_cast<const std::uint8_t*>(domain_.data()), domain_.size()),
                               binding_, to, Bytes(message.data(), len), Bytes(t, 16)});
  std::copy(tag.begin(), tag.end(), t + 16);
}

Unsealed SealedChannel::open(std::span<const std::uint8_t> sealed) {
  Unsealed u;
  if (sealed.size() < kSealTrailerBytes) {
    u.refusal = SealRefusal::TooShort;
    u.detail = fmt::format("{} bytes, a sealed message has at least {}", sealed.size(), kSealTrailerBytes);
    return u;
  }
  const std::size_t len = sealed.size() - kSealTrailerBytes;
  const std::uint8_t* t = sealed.data() + len;
  const auto key_id = static_cast<std::uint32_t>(get_le(t, 4));
  const auto sender = static_cast<std::uint32_t>(get_le(t + 4, 4));
  const std::uint64_t seq = get_le(t + 8, 8);
  if (key_id != mac_.key_id()) {
    u.refusal = SealRefusal::WrongKey;
    u.detail = fmt::format("keyed with key id {:08x}, ours is {:08x}", key_id, mac_.key_id());
    return u;
  }
  std::array<std::uint8_t, 4> me{};
  put_le(me.data(), me_, 4);
  if (!mac_.verify({Bytes(reinterpret_cast<const std::uint8_t*>(domain_.data()), domain_.size()), binding_, me,
                    sealed.first(len), Bytes(t, 16)},
                   Bytes(t + 16, kTagBytes))) {
    u.refusal = SealRefusal::BadMac;
    u.detail = fmt::format("message of {} bytes (seq {}) does not verify for this connection", len, seq);
    return u;
  }
  if (sender != peer_) {
    // Our own message reflected back at us verifies only if me == peer; refuse it anyway.
    u.refusal = SealRefusal::WrongSender;
    u.detail = fmt::format("from party {}, the peer is party {}", sender, peer_);
    return u;
  }
  if (!window_.take(seq)) {
    u.refusal = SealRefusal::Replayed;
    u.detail = fmt::format("seq {} already taken or too old (highest {})", seq, window_.highest());
    return u;
  }
  u.ok = true;
  u.message = sealed.first(len);
  return u;
}

}  // namespace railcheck::auth
