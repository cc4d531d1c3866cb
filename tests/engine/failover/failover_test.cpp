#include <algorithm>
#include <catch2/catch.hpp>

#include "engine/core/rc_timeouts.hpp"
#include "tests/engine/failover/test_support.hpp"
#include "verify/pair_world.hpp"

using namespace railcheck;
using railcheck::verify::PairEnd;
using railcheck::verify::PairWorld;

namespace {

// n messages posted on both sides, nothing delivered yet.
PairWorld stream(ReplayPolicy p, std::uint32_t n, std::uint32_t paths = 2) {
  PairWorld w(test::quiet_tunables(p), paths);
  w.handshake();
  for (std::uint32_t m = 0; m < n; ++m) w.irecv(m);
  for (std::uint32_t m = 0; m < n; ++m) w.isend(m);
  return w;
}

// Message 0 completes normally; message 1 lands at the receiver but its ACK is lost; then the
// primary's link dies, so the sender's HCA reports RETRY_EXC_ERR for message 1.
PairWorld ack_lost_then_link_dies(ReplayPolicy p) {
  PairWorld w = stream(p, 4);
  using K = verify::InFlight::Kind;
  REQUIRE(w.deliver_first(K::Data, 0));  // message 0 lands
  REQUIRE(w.deliver_first(K::Ack, 0));   // its ACK: the sender completes it
  REQUIRE(w.sends_completed() == 1);
  REQUIRE(w.land_data_drop_ack(0));  // message 1 lands, ACK lost
  w.kill_path(0);
  w.run(sec(10));
  return w;
}

std::vector<std::uint64_t> iota(std::uint64_t n) {
  std::vector<std::uint64_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

TEST_CASE("naive replay delivers a message twice when its ACK was lost before the link died", "[failover][replay]") {
  PairWorld w = ack_lost_then_link_dies(ReplayPolicy::Naive);
  INFO("delivered: " << Catch::Detail::stringify(w.delivered()));
  // Message 1 had landed; naive replays it because the sender never saw a success CQE, and
  // the replay lands in the buffer meant for message 2.
  REQUIRE(w.delivered().size() >= 3);
  CHECK(w.delivered()[1] == 1);
  CHECK(w.delivered()[2] == 1);
}

TEST_CASE("resync and probe deliver exactly once, in order, in the same interleaving", "[failover][replay]") {
  for (ReplayPolicy p : {ReplayPolicy::Resync, ReplayPolicy::Probe}) {
    INFO("policy " << to_string(p));
    PairWorld w = ack_lost_then_link_dies(p);
    CHECK(w.delivered() == iota(4));
    CHECK(w.sends_completed() == 4);
    CHECK(w.sends_failed() == 0);
    CHECK(w.sender().active_path() == PathIndex{1});
    CHECK(w.receiver().active_path() == PathIndex{1});
  }
}

TEST_CASE("failover runs ERR, drain, switch, lazy MR registration, replay, in that order", "[failover]") {
  PairWorld w = ack_lost_then_link_dies(ReplayPolicy::Resync);
  const Actions& log = w.log(PairEnd::Sender);
  const auto started = test::find_action(log, test::is_trace(TraceKind::FailoverStarted));
  REQUIRE(started);
  const auto err = test::find_action(log, test::is_modify(0, QpState::Err), *started);
  const auto drained = test::find_action(log, test::is_trace(TraceKind::Drained), *started);
  const auto switched = test::find_action(log, test::is_trace(TraceKind::Switched), *started);
  const auto reg = test::find_action(
      log,
      [](const Action& a) { return std::holds_alternative<RegisterMr>(a) && std::get<RegisterMr>(a).pd == PdId{1}; },
      *started);
  const auto replay = test::find_action(
      log, [](const Action& a) { return std::holds_alternative<PostSend>(a) && std::get<PostSend>(a).path.value == 1; },
      *started);
  REQUIRE(err);
  REQUIRE(drained);
  REQUIRE(switched);
  REQUIRE(reg);
  REQUIRE(replay);
  CHECK(*err < *drained);
  CHECK(*drained < *switched);
  CHECK(*switched < *reg);
  CHECK(*reg < *replay);
  // The trigger was the hardware's error completion, not the soft RTO.
  CHECK_THAT(std::get<Trace>(log[*started]).note.detail, Catch::Contains("RETRY_EXC_ERR"));
}

TEST_CASE("replay keeps the original order and the grouped receive's tag mapping", "[failover][replay]") {
  PairWorld w(test::quiet_tunables(ReplayPolicy::Resync), 2);
  w.handshake();
  w.irecv(0, 3);  // one grouped receive of three buffers, tags 0,1,2
  w.irecv(3, 3);
  for (std::uint32_t m = 0; m < 6; ++m) w.isend(m);
  w.kill_path(0);
  w.run(sec(10));
  // The receiver re-posted its six receives on path 1 in their original order and tags.
  std::vector<std::uint64_t> reposted_tags;
  for (const Action& a : w.log(PairEnd::Receiver))
    if (const auto* r = std::get_if<PostRecv>(&a); r && r->path.value == 1) reposted_tags.push_back(r->wr.tags.at(0));
  CHECK(reposted_tags == iota(6));
  CHECK(w.delivered() == iota(6));
}

TEST_CASE("with both paths dead the caller gets an error, not a hang", "[failover]") {
  PairWorld w = stream(ReplayPolicy::Resync, 4);
  w.kill_path(1);  // the standby dies first, silently (nothing is posted on it)
  w.kill_path(0);
  w.run(sec(10));
  CHECK(w.sender().failed());
  CHECK(w.sends_failed() == 4);
  CHECK(w.sends_completed() == 0);
  const bool reported = std::any_of(w.log(PairEnd::Sender).begin(), w.log(PairEnd::Sender).end(),
                                    [](const Action& a) { return std::holds_alternative<ConnectionFailed>(a); });
  CHECK(reported);
}

TEST_CASE("a standby that dies during failover is abandoned for the next path", "[failover]") {
  PairWorld w = stream(ReplayPolicy::Resync, 4, 3);
  w.kill_path(1);
  w.kill_path(0);
  w.run(sec(10));
  // Path 1 never answered the resync request; the control timeout moved the connection to 2.
  CHECK_FALSE(w.sender().failed());
  CHECK(w.sender().active_path() == PathIndex{2});
  CHECK(w.delivered() == iota(4));
  CHECK(w.sender().failovers() == 2);
}

TEST_CASE("the soft RTO fails over when the hardware reports nothing", "[failover][rto]") {
  HaTunables t = test::quiet_tunables(ReplayPolicy::Resync);
  PairWorld w(t, 2);
  w.handshake();
  w.isend(0);  // no receive posted: the send waits on RNR forever (rnr_retry = 7)
  w.run(t.initial_soft_rto() - ms(1));
  CHECK(w.sender().failovers() == 0);
  w.run(ms(2));
  CHECK(w.sender().failovers() == 1);
  const auto started = test::find_action(w.log(PairEnd::Sender), test::is_trace(TraceKind::FailoverStarted));
  REQUIRE(started);
  CHECK_THAT(std::get<Trace>(w.log(PairEnd::Sender)[*started]).note.detail, Catch::Contains("soft RTO"));
}

TEST_CASE("the default soft RTO is at least twice the hardware retry window", "[rto]") {
  HaTunables t;
  CHECK(t.initial_soft_rto() >= 2 * hardware_retry_window(t.qp));
  CHECK(t.initial_soft_rto() >= ms(1000));
  CHECK(advisories(t).empty());
  t.soft_rto = ms(300);
  CHECK_FALSE(advisories(t).empty());
}

TEST_CASE("repeated false alarms widen the soft RTO up to its cap", "[rto]") {
  HaTunables t;
  t.soft_rto = ms(1000);
  t.soft_rto_max = ms(2000);
  SoftRto rto(t);
  CHECK_FALSE(rto.on_failed_path_answered(ms(5)));
  CHECK_FALSE(rto.on_failed_path_answered(ms(5)));
  CHECK(rto.on_failed_path_answered(ms(5)));  // third in a row
  CHECK(rto.current() == ms(1500));
  // A genuine outage (the path stayed dead past the window) resets the streak.
  CHECK_FALSE(rto.on_failed_path_answered(ms(5)));
  CHECK_FALSE(rto.on_failed_path_answered(sec(5)));
  CHECK_FALSE(rto.on_failed_path_answered(ms(5)));
  CHECK_FALSE(rto.on_failed_path_answered(ms(5)));
  CHECK(rto.on_failed_path_answered(ms(5)));
  CHECK(rto.current() == ms(2000));  // 2250 capped
}

TEST_CASE("the hardware retry window follows the IB formula", "[rto]") {
  CHECK(ack_timeout(14) == Nanos{4096LL << 14});  // 67.1 ms
  QpReliability r;
  r.timeout = 14;
  r.retry_cnt = 7;
  CHECK(hardware_retry_window(r) == 8 * Nanos{4096LL << 14});
  CHECK(rnr_delay(12) == us(640));
  CHECK(rnr_delay(0) == us(655360));
}

TEST_CASE("a standby that stops answering heartbeats is not a failover candidate", "[failover][heartbeat]") {
  HaTunables t = test::quiet_tunables(ReplayPolicy::Resync);
  t.heartbeat_interval = ms(100);
  t.heartbeat_misses = 3;
  PairWorld w(t, 2);
  w.handshake();
  w.kill_path(1);  // the idle standby's link dies: its pings go unanswered
  w.run(ms(450));  // four heartbeat ticks: three misses
  CHECK(w.sender().path(PathIndex{1}).health == PathHealth::Suspect);
  w.irecv(0);
  w.isend(0);
  w.kill_path(0);
  w.run(ms(10));
  // No healthy standby: the caller gets an error at once, without waiting for a control timeout.
  CHECK(w.sender().failed());
  CHECK(w.sends_failed() == 1);
}

TEST_CASE("a connection with four paths survives three failures one after another", "[failover]") {
  PairWorld w = stream(ReplayPolicy::Resync, 2, 4);
  w.run(sec(1));
  CHECK(w.delivered() == iota(2));
  std::uint64_t next = 2;
  for (std::uint32_t dead = 0; dead < 3; ++dead) {
    INFO("killing path " << dead);
    w.irecv(next);
    w.isend(next);
    ++next;
    w.kill_path(dead);
    w.run(sec(10));
    CHECK(w.sender().active_path() == PathIndex{dead + 1});
    CHECK(w.delivered() == iota(next));
  }
  CHECK_FALSE(w.sender().failed());
  CHECK(w.sender().failovers() == 3);
}

TEST_CASE("a receiver ignores a failover notice older than the one it already followed", "[failover]") {
  // Notices travel on different paths and can overtake each other. Found by the model checker
  // (docs/verify.md, finding 3): following the stale one fenced the path the sender was on.
  PairWorld w(test::quiet_tunables(ReplayPolicy::Resync), 3);
  w.handshake();
  HaConnection& r = w.receiver();
  Actions out;
  r.handle(w.now(), ControlReceived{ControlChannel::on(PathIndex{2}), ResyncRequest{2, PathIndex{1}, PathIndex{2}}},
           out);
  // The receiver drains path 0 (nothing outstanding there) and switches to path 2 at once.
  REQUIRE(r.active_path() == PathIndex{2});
  out.clear();
  r.handle(w.now(), ControlReceived{ControlChannel::on(PathIndex{1}), ResyncRequest{1, PathIndex{0}, PathIndex{1}}},
           out);
  CHECK(r.active_path() == PathIndex{2});
  CHECK_FALSE(test::find_action(out, [](const Action& a) { return std::holds_alternative<ModifyQp>(a); }));
}
