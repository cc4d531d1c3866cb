// HMAC-SHA-256 through OpenSSL 3's EVP_MAC interface.
#include "engine/auth/message_mac.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "engine/core/engine_assert.hpp"

namespace railcheck::auth {

struct MessageMac::Context {
  EVP_MAC_CTX* ctx = nullptr;
};

void MessageMac::ContextFree::operator()(Context* c) const {
  if (c == nullptr) return;
  EVP_MAC_CTX_free(c->ctx);  // also wipes the keyed state
  delete c;
}

namespace {

// The fetched HMAC implementation, once per process (EVP_MAC_fetch is a provider lookup).
EVP_MAC* hmac() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  RAILCHECK_ASSERT(mac != nullptr, "OpenSSL's default provider offers HMAC");
  return mac;
}

}  // namespace

MessageMac::MessageMac(const JobKey& key) : ctx_(new Context), key_id_(key.key_id()) {
  ctx_->ctx = EVP_MAC_CTX_new(hmac());
  RAILCHECK_ASSERT(ctx_->ctx != nullptr, "EVP_MAC_CTX_new");
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  const int ok = EVP_MAC_init(ctx_->ctx, key.bytes_.data(), key.bytes_.size(), params);
  RAILCHECK_ASSERT(ok == 1, "EVP_MAC_init with an HMAC-SHA-256 key");
}

MessageMac::MessageMac(const MessageMac& other) : ctx_(new Context), key_id_(other.key_id_) {
  ctx_->ctx = EVP_MAC_CTX_dup(other.ctx_->ctx);
  RAILCHECK_ASSERT(ctx_->ctx != nullptr, "EVP_MAC_CTX_dup");
}

MessageMac& MessageMac::operator=(const MessageMac& other) {
  if (this != &other) *this = MessageMac(other);
  return *this;
}

MessageMac::~MessageMac() = default;

MacTag MessageMac::tag(MacInput parts) {
  // A NULL key re-initialises HMAC with the key already set (OpenSSL 3 hmac_init): the inner and
  // outer key blocks are not recomputed from scratch by the caller.
  int ok = EVP_MAC_init(ctx_->ctx, nullptr, 0, nullptr);
  for (const auto& p : parts) ok &= EVP_MAC_update(ctx_->ctx, p.data(), p.size());
  MacTag out{};
  std::size_t len = 0;
  ok &= EVP_MAC_final(ctx_->ctx, out.data(), &len, out.size());
  RAILCHECK_ASSERT(ok == 1 && len == kTagBytes, "HMAC-SHA-256 over in-memory bytes cannot fail");
  return out;
}

bool MessageMac::verify(MacInput parts, std::span<const std::uint8_t> tag) {
  if (tag.size() != kTagBytes) return false;
  const MacTag expected = this->tag(parts);
  return CRYPTO_memcmp(expected.data(), tag.data(), kTagBytes) == 0;
}

}  // namespace railcheck::auth
