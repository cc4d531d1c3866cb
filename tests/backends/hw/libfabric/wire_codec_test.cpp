// The two wire formats of the libfabric backend: control messages (control_codec.hpp) and
// endpoint addresses inside a QpEndpoint (endpoint_address.hpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "backends/hw/libfabric/control_codec.hpp"
#include "backends/hw/libfabric/endpoint_address.hpp"

using namespace railcheck;
using namespace railcheck::fabric;

namespace {

QpEndpoint sample_endpoint(std::uint8_t salt) {
  QpEndpoint e;
  e.qpn = 0x020000 | salt;
  for (std::size_t i = 0; i < e.gid.size(); ++i) e.gid[i] = static_cast<std::uint8_t>(salt + i);
  e.lid = static_cast<std::uint16_t>(0x1200 + salt);
  e.psn = 0x00ABCD00U | salt;
  return e;
}

}  // namespace

TEST_CASE("every control message survives encode and decode, with its channel flag", "[fabric][codec]") {
  const std::vector<ControlMessage> all = {
      ConnectRequest{sample_endpoint(1)},
      ConnectAck{},
      StandbyParams{{sample_endpoint(2), sample_endpoint(3)}, true},
      FailoverNotice{4, PathIndex{0}, PathIndex{1}},
      ResyncRequest{5, PathIndex{1}, PathIndex{2}},
      ResyncAck{6, 0x1122334455667788ULL},
      ProbeRequest{7, {1, 2, 0xFFFFFFFFFFULL}},
      ProbeReply{8, {}},
      Ping{0xDEADBEEF},
      Pong{0xFEEDFACE},
      PathRevive{PathIndex{1}, true},
  };
  for (const auto& m : all) {
    for (bool oob : {false, true}) {
      auto bytes = encode_control(oob, m);
      REQUIRE(bytes.ok());
      auto back = decode_control(bytes.value());
      INFO(control_name(m));
      REQUIRE(back.ok());
      CHECK(back->out_of_band == oob);
      CHECK(back->message == m);
    }
  }
}

TEST_CASE("control decoding rejects truncation, trailing bytes, versions and lying counts", "[fabric][codec]") {
  auto good = encode_control(false, StandbyParams{{sample_endpoint(9)}, false}).value();
  // Every proper prefix is refused, never read past.
  for (std::size_t n = 0; n < good.size(); ++n) {
    CHECK_FALSE(decode_control(std::span<const std::uint8_t>(good.data(), n)).ok());
  }
  auto longer = good;
  longer.push_back(0);
  CHECK_FALSE(decode_control(longer).ok());
  auto version = good;
  version[0] = 2;
  CHECK_THAT(decode_control(version).error().what, Catch::Contains("version 2"));
  auto type = good;
  type[1] = 77;
  CHECK_THAT(decode_control(type).error().what, Catch::Contains("unknown"));
  auto flags = good;
  flags[2] = 0x80;
  CHECK_FALSE(decode_control(flags).ok());
  // A count of 2^32-1 endpoints backed by one endpoint's bytes: refused before allocating.
  auto count = good;
  count[9] = count[10] = count[11] = count[12] = 0xFF;
  CHECK_THAT(decode_control(count).error().what, Catch::Contains("count"));
}

TEST_CASE("an IPv4 endpoint maps into a QpEndpoint and back to the same sockaddr_in", "[fabric][codec]") {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(40123);
  sin.sin_addr.s_addr = htonl(0xA9FE0102);  // 169.254.1.2
  std::vector<std::uint8_t> raw(sizeof(sin));
  std::memcpy(raw.data(), &sin, sizeof(sin));
  auto ep = encode_endpoint(raw, FI_SOCKADDR_IN);
  REQUIRE(ep.ok());
  CHECK(ep->qpn >> 16 == 1);
  CHECK(ep->lid == 40123);
  CHECK(ep->gid[0] == 169);
  CHECK(ep->gid[3] == 2);
  auto back = decode_endpoint(ep.value());
  REQUIRE(back.ok());
  CHECK(back.value() == raw);
}

TEST_CASE("a shm name of at most 16 bytes maps into the gid, a longer one is refused", "[fabric][codec]") {
  const std::string name = "rc1a2b3c.f";
  std::vector<std::uint8_t> raw(name.begin(), name.end());
  raw.push_back(0);
  auto ep = encode_endpoint(raw, FI_ADDR_STR);
  REQUIRE(ep.ok());
  auto back = decode_endpoint(ep.value());
  REQUIRE(back.ok());
  CHECK(std::string(reinterpret_cast<const char*>(back->data())) == name);

  const std::string longer = "fi_shm://1234:0:0";
  std::vector<std::uint8_t> raw_long(longer.begin(), longer.end());
  raw_long.push_back(0);
  auto refused = encode_endpoint(raw_long, FI_ADDR_STR);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().what, Catch::Contains("at most 16"));
}

TEST_CASE("an EFA address keeps GID, QP number and qkey, its next pointer never travels", "[fabric][codec]") {
  std::vector<std::uint8_t> raw(kEfaAddressBytes, 0);
  for (int i = 0; i < 16; ++i) raw[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(0xF0 + i);
  const std::uint16_t qpn = 0x1234;
  const std::uint32_t qkey = 0x89ABCDEF;
  std::memcpy(raw.data() + 16, &qpn, 2);
  std::memcpy(raw.data() + 20, &qkey, 4);
  std::memset(raw.data() + 24, 0x77, 8);  // process-local `next` pointer
  auto ep = encode_endpoint(raw, FI_ADDR_EFA);
  REQUIRE(ep.ok());
  CHECK((ep->qpn & 0xFFFFFF) == ep->qpn);
  CHECK(ep->psn <= 0xFFFFFF);
  auto back = decode_endpoint(ep.value());
  REQUIRE(back.ok());
  auto expected = raw;
  std::memset(expected.data() + 24, 0, 8);
  CHECK(back.value() == expected);
}

TEST_CASE("a QpEndpoint that is no libfabric address is refused", "[fabric][codec]") {
  QpEndpoint verbs;  // a verbs QP: kind bits 0
  verbs.qpn = 0x00012A;
  auto r = decode_endpoint(verbs);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("not a libfabric address"));
}

TEST_CASE("a delivery ack survives encode and decode and is not an engine message", "[fabric][codec]") {
  const auto bytes = encode_delivery_ack(DeliveryAck{0x1'0000'0007ULL});
  auto back = decode_control(bytes);
  REQUIRE(back.ok());
  REQUIRE(back->delivery_ack);
  CHECK(back->delivery_ack->next == 0x1'0000'0007ULL);
  CHECK_FALSE(back->message);
  CHECK_FALSE(back->out_of_band);
  // A truncated one is refused, as every other type.
  CHECK_FALSE(decode_control(std::span<const std::uint8_t>(bytes.data(), bytes.size() - 1)).ok());
}
