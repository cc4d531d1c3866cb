#include <catch2/catch.hpp>

#include "tests/engine/failover/test_support.hpp"
#include "verify/pair_world.hpp"

using namespace railcheck;
using railcheck::verify::PairEnd;
using railcheck::verify::PairWorld;

TEST_CASE("connect and accept hand out no comm until the primary QP is RTS on both sides", "[handshake]") {
  PairWorld w(test::quiet_tunables(ReplayPolicy::Resync), 2);
  Actions acts;
  const ConnectionHandle h = w.receiver().listen(acts);
  REQUIRE(h.dual_path);
  REQUIRE_FALSE(w.receiver().comm_ready());

  const auto bytes = encode_handle(h);
  REQUIRE(w.sender().connect(Nanos{0}, bytes, acts).ok());
  // The connector's QP is RTS, but the listener has not brought its side up: no comm yet.
  REQUIRE_FALSE(w.sender().comm_ready());
  REQUIRE(w.sender().path(PathIndex{0}).qp == QpState::Rts);

  w.handshake();  // a fresh exchange inside the world, delivered in order
  REQUIRE(w.sender().comm_ready());
  REQUIRE(w.receiver().comm_ready());
  // On each side, the primary went RTS before the comm was handed out.
  for (PairEnd e : {PairEnd::Sender, PairEnd::Receiver}) {
    const auto& log = w.log(e);
    const auto rts = test::find_action(log, test::is_modify(0, QpState::Rts));
    const auto ready =
        test::find_action(log, [](const Action& a) { return std::holds_alternative<ConnectionReady>(a); });
    REQUIRE(rts);
    REQUIRE(ready);
    CHECK(*rts < *ready);
  }
}

TEST_CASE("phase 2 brings the standby up over the primary, after the comm is handed out", "[handshake]") {
  PairWorld w(test::quiet_tunables(ReplayPolicy::Resync), 3);
  w.handshake();
  for (std::uint32_t p = 1; p < 3; ++p) {
    CHECK(w.sender().path(PathIndex{p}).health == PathHealth::Ready);
    CHECK(w.receiver().path(PathIndex{p}).health == PathHealth::Ready);
    CHECK(w.sender().path(PathIndex{p}).qp == QpState::Rts);
  }
  const auto& log = w.log(PairEnd::Sender);
  const auto ready = test::find_action(log, [](const Action& a) { return std::holds_alternative<ConnectionReady>(a); });
  const auto offer = test::find_action(log, [](const Action& a) {
    const auto* s = std::get_if<SendControl>(&a);
    return s && std::holds_alternative<StandbyParams>(s->message) && !s->channel.out_of_band &&
           s->channel.path.value == 0;
  });
  REQUIRE(ready);
  REQUIRE(offer);
  CHECK(*ready < *offer);
}

TEST_CASE("a handle from a peer without the HA magic degrades the connection to one path", "[handshake]") {
  PairWorld w(test::quiet_tunables(ReplayPolicy::Resync), 2);
  QpEndpoint ep;
  ep.qpn = 0x1234;
  Actions acts;
  REQUIRE(w.sender().connect(Nanos{0}, encode_single_path_handle(ep), acts).ok());
  CHECK(w.sender().path_count() == 1);
}

TEST_CASE("a garbled handle is rejected with a clear error and nothing is posted", "[handshake]") {
  PairWorld w(test::quiet_tunables(ReplayPolicy::Resync), 2);
  Actions acts;
  auto bytes = encode_handle(ConnectionHandle{true, QpEndpoint{}});
  bytes[9] ^= 0x40;
  const auto r = w.sender().connect(Nanos{0}, bytes, acts);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("checksum"));
  CHECK(acts.empty());
  CHECK_FALSE(w.sender().comm_ready());
}
