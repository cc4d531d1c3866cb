// The per-job key: validation, the key id, and wiping.
#include "engine/auth/job_key.hpp"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>

#include "engine/core/engine_assert.hpp"

namespace railcheck::auth {

namespace {

std::uint32_t compute_key_id(const std::vector<std::uint8_t>& key) {
  static constexpr char kLabel[] = "railcheck key id v1";
  std::array<std::uint8_t, EVP_MAX_MD_SIZE> out{};
  std::size_t out_len = 0;
  const auto* done = EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
                               reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1, out.data(),
                               out.size(), &out_len);
  RAILCHECK_ASSERT(done != nullptr && out_len >= 4, "HMAC-SHA-256 is available in every OpenSSL 3 libcrypto");
  return static_cast<std::uint32_t>(out[0]) | static_cast<std::uint32_t>(out[1]) << 8 |
         static_cast<std::uint32_t>(out[2]) << 16 | static_cast<std::uint32_t>(out[3]) << 24;
}

}  // namespace

Result<JobKey> JobKey::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kMinKeyBytes) {
    return Error{fmt::format("job key is {} bytes, at least {} needed", bytes.size(), kMinKeyBytes),
                 "make one with: openssl rand -hex 32"};
  }
  if (bytes.size() > kMaxKeyBytes) {
    return Error{fmt::format("job key is {} bytes, at most {} allowed", bytes.size(), kMaxKeyBytes),
                 "a key file holds one key, e.g. the 64 hex characters of: openssl rand -hex 32"};
  }
  return JobKey(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
}

JobKey::JobKey(std::vector<std::uint8_t> bytes) : bytes_(std::move(bytes)), key_id_(compute_key_id(bytes_)) {}

JobKey::JobKey(const JobKey& other) : bytes_(other.bytes_), key_id_(other.key_id_) {}

JobKey& JobKey::operator=(const JobKey& other) {
  if (this != &other) {
    wipe();
    bytes_ = other.bytes_;
    key_id_ = other.key_id_;
  }
  return *this;
}

JobKey::JobKey(JobKey&& other) noexcept : bytes_(std::move(other.bytes_)), key_id_(other.key_id_) {
  other.bytes_.clear();
}

JobKey& JobKey::operator=(JobKey&& other) noexcept {
  if (this != &other) {
    wipe();
    bytes_ = std::move(other.bytes_);
    key_id_ = other.key_id_;
    other.bytes_.clear();
  }
  return *this;
}

JobKey::~JobKey() { wipe(); }

void JobKey::wipe() {
  // OPENSSL_cleanse: a plain memset before free may be optimised away.
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
  bytes_.clear();
}

}  // namespace railcheck::auth
