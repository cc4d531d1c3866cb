#pragma once
// HMAC-SHA-256 (RFC 2104, FIPS 198-1) through OpenSSL 3's EVP_MAC. One MessageMac holds a keyed
// context and re-initialises it per message, so the key schedule is paid once, not per frame.
// Not thread-safe: each connection (or each bootstrap identity) owns its own; copies are cheap
// and independent.
//
// The input is a list of byte spans, hashed in order, so a caller MACs a header, a payload and
// the fields that bind them (receiver, sequence number) without first copying them together.
// Every caller starts its list with a domain label of its own (e.g. "railcheck bootstrap v2"),
// so a tag made for one protocol never verifies as another's.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>

#include "engine/auth/job_key.hpp"

namespace railcheck::auth {

constexpr std::size_t kTagBytes = 32;
using MacTag = std::array<std::uint8_t, kTagBytes>;
using MacInput = std::initializer_list<std::span<const std::uint8_t>>;

class MessageMac {
 public:
  explicit MessageMac(const JobKey& key);
  MessageMac(const MessageMac& other);
  MessageMac& operator=(const MessageMac& other);
  MessageMac(MessageMac&&) noexcept = default;
  MessageMac& operator=(MessageMac&&) noexcept = default;
  ~MessageMac();

  MacTag tag(MacInput parts);
  // Constant time in the tag's bytes (CRYPTO_memcmp): a forger learns nothing from timing.
  bool verify(MacInput parts, std::span<const std::uint8_t> tag);
  std::uint32_t key_id() const { return key_id_; }

 private:
  struct Context;
  struct ContextFree {
    void operator()(Context* c) const;
  };
  std::unique_ptr<Context, ContextFree> ctx_;
  std::uint32_t key_id_ = 0;
};

// A span over a string literal's characters (without its terminating NUL), for domain labels.
template <std::size_t N>
std::span<const std::uint8_t> label(const char (&s)[N]) {
  return {reinterpret_cast<const std::uint8_t*>(s), N - 1};
}

}  // namespace railcheck::auth
