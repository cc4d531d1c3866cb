// HMAC-SHA-256 through libcrypto (engine/auth/message_mac.hpp) and the job key's rules.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/auth/job_key.hpp"
#include "engine/auth/message_mac.hpp"

namespace railcheck::auth {
namespace {

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST_CASE("MessageMac is HMAC-SHA-256: RFC 4231 test case 1", "[auth]") {
  const std::vector<std::uint8_t> key_bytes(20, 0x0b);
  auto key = JobKey::from_bytes(key_bytes);
  REQUIRE(key.ok());
  MessageMac mac(key.value());
  const std::string data = "Hi There";
  const MacTag expected = {0xb0, 0x34, 0x4c, 0x61, 0xd8, 0xdb, 0x38, 0x53, 0x5c, 0xa8, 0xaf, 0xce, 0xaf, 0x0b, 0xf1, 0x2b,
                           0x88, 0x1d, 0xc2, 0x00, 0xc9, 0x83, 0x3d, 0xa7, 0x26, 0xe9, 0x37, 0x6c, 0x2e, 0x32, 0xcf, 0xf7};
  CHECK(mac.tag({bytes_of(data)}) == expected);
  // Split input hashes as one, and the context is reusable message after message.
  CHECK(mac.tag({bytes_of("Hi "), bytes_of("There")}) == expected);
  CHECK(mac.verify({bytes_of(data)}, expected));
  MessageMac copy(mac);
  CHECK(copy.tag({bytes_of(data)}) == expected);
}

TEST_CASE("MessageMac refuses a tag of another key, another message or another length", "[auth]") {
  auto a = JobKey::from_bytes(std::vector<std::uint8_t>(32, 1));
  auto b = JobKey::from_bytes(std::vector<std::uint8_t>(32, 2));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  MessageMac ma(a.value());
  MessageMac mb(b.value());
  const MacTag t = ma.tag({bytes_of("frame")});
  CHECK(ma.verify({bytes_of("frame")}, t));
  CHECK_FALSE(mb.verify({bytes_of("frame")}, t));
  CHECK_FALSE(ma.verify({bytes_of("framE")}, t));
  CHECK_FALSE(ma.verify({bytes_of("frame")}, std::span<const std::uint8_t>(t.data(), 31)));
  CHECK(a.value().key_id() != b.value().key_id());
  CHECK(a.value().key_id() == JobKey::from_bytes(std::vector<std::uint8_t>(32, 1)).value().key_id());
}

TEST_CASE("a job key shorter than 16 bytes is refused, saying how to make one", "[auth]") {
  auto k = JobKey::from_bytes(std::vector<std::uint8_t>(15, 7));
  REQUIRE_FALSE(k.ok());
  CHECK(k.error().what == "job key is 15 bytes, at least 16 needed");
  CHECK(k.error().hint == "make one with: openssl rand -hex 32");
  CHECK_FALSE(JobKey::from_bytes(std::vector<std::uint8_t>(kMaxKeyBytes + 1, 7)).ok());
}

}  // namespace
}  // namespace railcheck::auth
