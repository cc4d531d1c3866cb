// The sim's model of a link whose transport is TCP, as `railcheck validate` sets it for the netns
// lab (NicPreset::host_gbps, transport_rto, mtu; docs/validation.md): the hosts' per-message rate
// bounds the stream, a cut waits for TCP's retransmission timeout and not the HCA's ACK timeout,
// a partial loss is repaired a round trip later and loses nothing. The same scenarios on the
// shipped NIC show what changed.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>

#include "backends/sim/sim_run.hpp"
#include "models/scenario.hpp"

using namespace railcheck;

namespace {

Scenario scenario_file(const std::string& name) {
  auto sc = load_scenario_file(fmt::format("{}/scenarios/{}", RAILCHECK_SOURCE_DIR, name));
  REQUIRE(sc.ok());
  return std::move(sc).value();
}

// The lab link of a 2 Gb/s stream with a 100 us round trip; one stream of 16 KiB messages.
Scenario on_tcp_link(Scenario sc) {
  NicPreset& nic = sc.topology.nic;
  nic.host_gbps = 2.0;
  nic.link_gbps = 1000;
  nic.link_latency = std::chrono::microseconds(25);
  nic.transport_rto = ms(200);
  nic.mtu = 1448;
  sc.workload.pattern = TrafficPattern::Unidirectional;
  sc.workload.message_bytes = 16 * 1024;
  sc.workload.messages = 4000;
  return sc;
}

}  // namespace

TEST_CASE("lab link model: the hosts' per-message rate bounds one stream", "[sim][validate]") {
  Scenario sc = on_tcp_link(scenario_file("primary-dies.toml"));
  sc.faults = {};
  const auto s = sim::run_scenario(sc, 1).summary;
  REQUIRE(s.outcome == sim::RunOutcome::Delivered);
  const double gbps = static_cast<double>(s.messages_delivered) * 16 * 1024 * 8 / (to_millis(s.end_time) / 1e3) / 1e9;
  // Window 8 covers the round trip many times over: the stream runs at the hosts' rate, not
  // below it (a shared slow wire made it 20-30 % slower) and never above it.
  CHECK(gbps == Approx(2.0).epsilon(0.05));
}

TEST_CASE("lab link model: a short cut costs TCP's retransmission timeout, not the HCA's", "[sim][validate]") {
  // 40 ms down with the detector off: no failover on either transport; the stream waits for the
  // first retransmission after the link is back.
  const Scenario rc = scenario_file("short-flap.toml");
  Scenario tcp = on_tcp_link(rc);
  const auto on_tcp = sim::run_scenario(tcp, 1).summary;
  REQUIRE(on_tcp.outcome == sim::RunOutcome::Delivered);
  CHECK(on_tcp.failovers == 0);
  CHECK(on_tcp.lost == 0);
  // The same stream without the cut, for its length.
  Scenario clean = tcp;
  clean.faults = {};
  const auto base = sim::run_scenario(clean, 1).summary;
  const double stall_ms = to_millis(on_tcp.end_time - base.end_time);
  // Packets sent into the cut go again 200 ms after they were sent: the stream loses ~200 ms (the
  // cut's own 40 ms lie inside it).
  CHECK(stall_ms > 180);
  CHECK(stall_ms < 260);
}

TEST_CASE("lab link model: a partial loss is repaired a round trip later and loses nothing", "[sim][validate]") {
  Scenario sc = on_tcp_link(scenario_file("lossy-primary.toml"));
  const auto lossy = sim::run_scenario(sc, 1).summary;
  REQUIRE(lossy.outcome == sim::RunOutcome::Delivered);
  CHECK(lossy.lost == 0);
  CHECK(lossy.failovers == 0);
  CHECK(lossy.counters.retransmissions > 0);
  Scenario clean = sc;
  clean.faults = {};
  const auto base = sim::run_scenario(clean, 1).summary;
  // 1 % of 12 segments per message: about one message in nine waits a 100 us round trip for
  // 200 ms of the stream: milliseconds at most, never an RTO of 200 ms.
  CHECK(to_millis(lossy.end_time - base.end_time) < 20);
  // On the shipped RC NIC (its own stream of 4 MiB messages, inside the loss window) each lost
  // packet waits out the HCA's ACK timeout instead, and still nothing is lost.
  const auto on_rc = sim::run_scenario(scenario_file("lossy-primary.toml"), 1).summary;
  CHECK(on_rc.outcome == sim::RunOutcome::Delivered);
  CHECK(on_rc.lost == 0);
  CHECK(on_rc.counters.retransmissions > 0);
}
