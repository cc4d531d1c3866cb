#pragma once
// The per-job secret every rank of one job shares (issue 46). Its bytes never leave this class
// except into the MAC (message_mac.hpp): there is no getter, no formatter and no operator<<,
// so a key cannot end up in a log line or an error by accident. The memory is wiped when the
// key goes away.
//
// A key id (a MAC of a fixed label under the key, 4 bytes) travels in authenticated frames so a
// receiver can tell "the sender holds another key" from "these bytes were altered"; it reveals
// nothing about the key that a frame's own MAC does not.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::auth {

// HMAC-SHA-256 keys shorter than the digest weaken it (RFC 2104 §3): 16 bytes is the floor,
// 32 (`openssl rand -hex 32`) is what docs/security.md tells launchers to make.
constexpr std::size_t kMinKeyBytes = 16;
constexpr std::size_t kMaxKeyBytes = 4096;

class JobKey {
 public:
  static Result<JobKey> from_bytes(std::span<const std::uint8_t> bytes);

  JobKey(const JobKey& other);
  JobKey& operator=(const JobKey& other);
  JobKey(JobKey&& other) noexcept;
  JobKey& operator=(JobKey&& other) noexcept;
  ~JobKey();

  std::uint32_t key_id() const { return key_id_; }

 private:
  friend class MessageMac;
  explicit JobKey(std::vector<std::uint8_t> bytes);
  void wipe();

  std::vector<std::uint8_t> bytes_;
  std::uint32_t key_id_ = 0;
};

}  // namespace railcheck::auth
