// Nothing process-local crosses a process boundary: the WireSafe check
// (engine/core/wire_safe.hpp) on the wire structs, and the PassSm proxy-setup codec
// (engine/plan/proxy_share.hpp) that sends only the shareable descriptor.
#include "engine/plan/proxy_share.hpp"

#include <catch2/catch.hpp>

#include "engine/core/control_message.hpp"
#include "engine/handshake/handle_codec.hpp"

namespace railcheck::plan {
namespace {

// What the seed's fork did: the whole setup struct as the message.
struct WholeStructResponse {
  CudaStream stream;
  ShmIpcDesc desc;
};
struct WithPointer {
  std::uint32_t size;
  char* recv_fifo;
};
struct WithLocalId {
  MrId mr;
};

TEST_CASE("WireSafe accepts shareable aggregates and rejects handles, pointers and local ids", "[plan][wire]") {
  CHECK(WireSafe<QpEndpoint>);
  CHECK(WireSafe<ConnectionHandle>);
  CHECK(WireSafe<StandbyParams>);
  CHECK(WireSafe<FailoverNotice>);
  CHECK(WireSafe<ProxyShare>);
  CHECK_FALSE(WireSafe<ProxyResources>);
  CHECK_FALSE(WireSafe<WholeStructResponse>);
  CHECK_FALSE(WireSafe<WithPointer>);
  CHECK_FALSE(WireSafe<WithLocalId>);
  CHECK_FALSE(WireSafe<CudaEvent>);
}

TEST_CASE("the proxy share round-trips and carries nothing but the descriptor", "[plan][wire]") {
  ProxyResources local;
  local.stream.raw = 0x7fa4f407ed90;  // must not leave the process
  local.desc.size = 4 << 20;
  local.desc.creator_rank = 6;
  const std::string name = "nccl-shm-psm-6";
  std::copy(name.begin(), name.end(), local.desc.name.begin());
  const auto bytes = encode_proxy_share(share_of(local));
  auto back = decode_proxy_share(bytes);
  REQUIRE(back.ok());
  CHECK(back.value() == share_of(local));
  // The stream handle's bytes appear nowhere in the message.
  const std::array<std::uint8_t, 3> handle_tail = {0x90, 0xed, 0x07};
  CHECK(std::search(bytes.begin(), bytes.end(), handle_tail.begin(), handle_tail.end()) == bytes.end());
}

TEST_CASE("a proxy share of the wrong size is rejected, not copied over local state", "[plan][wire]") {
  std::vector<std::uint8_t> whole(kProxyShareWireSize + 8 * (1 + kPsmSteps), 0);
  auto r = decode_proxy_share(whole);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("expected 52"));
}

}  // namespace
}  // namespace railcheck::plan
