// backends/validate without the lab (issue 41): how a scenario becomes the lab's plan and the
// sim's lab-link scenario (lab_scenario.cpp), and how the two drivers' figures are judged
// (side_by_side.cpp). The lab runs themselves are tests/cli/cmd_validate_test.cpp.
#include <algorithm>
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <string>

#include "backends/validate/calibration.hpp"
#include "backends/validate/lab_scenario.hpp"
#include "backends/validate/side_by_side.hpp"
#include "models/scenario.hpp"

using namespace railcheck;
using namespace railcheck::validation;
using Act = conform::LabAction::Kind;

namespace {

Scenario scenario_file(const std::string& name) {
  auto sc = load_scenario_file(fmt::format("{}/scenarios/{}", RAILCHECK_SOURCE_DIR, name));
  REQUIRE(sc.ok());
  return std::move(sc).value();
}

LabLink calibrated() {
  LabLink l;
  l.gbps = 2.0;
  l.round_trip = std::chrono::microseconds(160);
  l.message_bytes = 16 * 1024;
  l.window = 8;
  l.idle_rail_poll = ms(4);
  l.transport_rto = ms(200);
  return l;
}

std::size_t count(const conform::LabFault& f, Act k) {
  std::size_t n = 0;
  for (const auto& a : f.actions) n += a.kind == k ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("validate model: the lab's plan carries the scenario's faults, after the warm-up", "[validate]") {
  SECTION("a flap is its cycles of down and up on the rail, at the scenario's times") {
    const Scenario sc = scenario_file("link-flap.toml");
    auto v = lab_version(sc, calibrated());
    REQUIRE(v.ok());
    const auto& flap = sc.faults.flaps.front();
    CHECK(count(v->lab.fault, Act::LinkDown) == flap.count);
    CHECK(count(v->lab.fault, Act::LinkUp) == flap.count);
    const auto& first = v->lab.fault.actions.front();
    CHECK(first.kind == Act::LinkDown);
    CHECK(first.rail == static_cast<int>(flap.link.rail));
    CHECK(first.at == flap.start - sc.workload.start);
    CHECK(v->lab.fault.actions[1].at == flap.start + flap.down_for - sc.workload.start);
  }
  SECTION("a one-way loss is a loss on that rank's end of the rail, cleared at its end") {
    const Scenario sc = scenario_file("one-way-loss.toml");
    auto v = lab_version(sc, calibrated());
    REQUIRE(v.ok());
    const auto& loss = sc.faults.losses.front();
    REQUIRE(count(v->lab.fault, Act::Loss) == 1);
    for (const auto& a : v->lab.fault.actions)
      if (a.kind == Act::Loss) {
        CHECK(a.side == static_cast<int>(loss.link.rank));
        CHECK(a.loss == loss.probability);
      }
    CHECK(count(v->lab.fault, Act::Clear) == 1);
  }
  SECTION("a delay spike holds both ends of the rail, with the sim's extra and spread") {
    const Scenario sc = scenario_file("delay-spike.toml");
    auto v = lab_version(sc, calibrated());
    REQUIRE(v.ok());
    REQUIRE(count(v->lab.fault, Act::Delay) == 2);
    bool side[2] = {false, false};
    for (const auto& a : v->lab.fault.actions)
      if (a.kind == Act::Delay) {
        side[a.side] = true;
        CHECK(a.delay == sc.faults.jitters.front().extra);
        CHECK(a.spread == sc.faults.jitters.front().spread);
      }
    CHECK((side[0] && side[1]));
  }
  SECTION("a stall stops the receiver for its length") {
    const Scenario sc = scenario_file("peer-stall.toml");
    auto v = lab_version(sc, calibrated());
    REQUIRE(v.ok());
    REQUIRE(count(v->lab.fault, Act::StopReceiver) == 1);
    REQUIRE(count(v->lab.fault, Act::ContReceiver) == 1);
    CHECK(v->lab.fault.actions[1].at - v->lab.fault.actions[0].at == sc.faults.stalls.front().for_);
  }
  SECTION("the stream is one direction of eager messages, warm-up added to its length") {
    const Scenario sc = scenario_file("primary-dies.toml");
    auto v = lab_version(sc, calibrated());
    REQUIRE(v.ok());
    CHECK(v->sim.workload.pattern == TrafficPattern::Unidirectional);
    CHECK(v->sim.workload.message_bytes == kLabMaxMessageBytes);
    CHECK(v->lab.warmup == lab_warmup(sc.workload.window));
    CHECK(v->lab.spec.messages == v->sim.workload.messages + v->lab.warmup);
    // The stream outlasts the fault by kLabRunPastFault at the calibrated rate.
    const double seconds = static_cast<double>(v->sim.workload.messages) * kLabMaxMessageBytes * 8 / 2.0e9;
    CHECK(seconds >= to_millis(sc.faults.downs.front().at) / 1e3 + 0.4 - 0.001);
  }
}

TEST_CASE("validate model: the sim's NIC becomes the calibrated lab link", "[validate]") {
  const Scenario sc = scenario_file("primary-dies.toml");
  const LabLink link = calibrated();
  auto v = lab_version(sc, link);
  REQUIRE(v.ok());
  const NicPreset& nic = v->sim.topology.nic;
  CHECK(nic.name == "lab-veth-tcp");
  CHECK(nic.host_gbps == link.gbps);  // the stream's rate is the hosts' work per message
  CHECK(nic.link_gbps == kLabWireGbps);
  CHECK(nic.link_latency == link.round_trip / 4);
  CHECK(nic.idle_rail_poll == link.idle_rail_poll);
  CHECK(nic.transport_rto == link.transport_rto);
  CHECK(v->lab.tunables.liveness == sc.engine.liveness);
  LabLink none = link;
  none.gbps = 0;
  CHECK_FALSE(lab_version(sc, none).ok());
}

TEST_CASE("validate model: --calibrate's [topology] keys give a scenario the lab link the sim validated",
          "[validate]") {
  const LabLink link = calibrated();
  const std::string keys = topology_keys(link, "tcp;ofi_rxm");
  INFO(keys);
  const std::string text = "name = \"lab\"\n" + keys.substr(0, keys.find("[topology]")) +
                           keys.substr(keys.find("[topology]")) + "ranks = 2\nrails = 2\n";
  auto sc = load_scenario_string(text, "lab.toml");
  REQUIRE(sc.ok());
  NicPreset expected;
  apply_lab_link(expected, link);
  const NicPreset& got = sc->topology.nic;
  CHECK(got.host_gbps == Approx(expected.host_gbps));
  CHECK(got.link_gbps == Approx(expected.link_gbps));
  CHECK(got.link_latency == expected.link_latency);
  CHECK(got.mtu == expected.mtu);
  CHECK(got.idle_rail_poll == expected.idle_rail_poll);
  CHECK(got.transport_rto == expected.transport_rto);
  // Out of range is the loader's usual one-line error.
  CHECK_FALSE(load_scenario_string("name = \"x\"\n[topology]\ntransport_rto_ms = -1\n", "x.toml").ok());
}

TEST_CASE("validate model: what the lab cannot make is named", "[validate]") {
  CHECK(not_runnable(scenario_file("incast-congestion.toml")).value_or("").find("incast") != std::string::npos);
  CHECK(not_runnable(scenario_file("swarm-2776-spike-latency-drop.toml")).value_or("").find("two or three rails") !=
        std::string::npos);
  Scenario four_rails = scenario_file("standby-dies-three-paths.toml");
  four_rails.topology.rails = four_rails.topology.paths_per_conn = 4;
  CHECK(not_runnable(four_rails).has_value());
  for (const char* ok : {"primary-dies.toml", "short-flap.toml", "link-flap.toml", "one-way-loss.toml",
                         "peer-stall.toml", "delay-spike.toml", "both-paths-die.toml", "standby-dies-liveness.toml",
                         "standby-dies-three-paths.toml"}) {
    INFO(ok);
    CHECK_FALSE(not_runnable(scenario_file(ok)).has_value());
  }
  Scenario two_losses = scenario_file("one-way-loss.toml");
  two_losses.faults.losses.push_back(two_losses.faults.losses.front());
  CHECK(not_runnable(two_losses).value_or("").find("one loss or delay") != std::string::npos);
}

namespace {

sim::RunSummary predicted(double detection_ms, double gbps_before) {
  sim::RunSummary s;
  s.fault_at = ms(20);
  s.detected_at = ms(20) + Nanos{static_cast<std::int64_t>(detection_ms * 1e6)};
  s.failovers = 1;
  s.gbps_before_fault = gbps_before;
  s.messages_delivered = 100;
  s.end_time = ms(100);
  return s;
}

conform::LabFailoverResult measured(double detection_ms, double gbps_before) {
  conform::LabFailoverResult r;
  r.sender_exit = r.receiver_exit = 0;
  r.messages = r.verified = 100;
  r.start_ns = 0;
  r.fault_ns = 20'000'000;
  r.detected_ns = r.fault_ns + static_cast<long long>(detection_ms * 1e6);
  r.end_ns = 100'000'000;
  r.failovers = 1;
  r.gbps_before = gbps_before;
  return r;
}

const Row& row(const SideBySide& s, const std::string& metric) {
  for (const auto& r : s.rows)
    if (r.metric == metric) return r;
  FAIL("no row " << metric);
  return s.rows.front();
}

}  // namespace

TEST_CASE("validate model: each column is the median of its runs, judged by the tolerance", "[validate]") {
  const std::vector<sim::RunSummary> sims = {predicted(19.0, 2.0), predicted(20.0, 2.0), predicted(21.0, 2.0)};
  SECTION("times within 2 ms agree; an outlier run does not move the median") {
    const auto s = compare("t", sims, 16384, {measured(20.5, 2.0), measured(21.5, 2.1), measured(90.0, 1.9)}, {});
    CHECK(row(s, "detection_ms").sim == Approx(20.0));
    CHECK(row(s, "detection_ms").hardware == Approx(21.5));
    CHECK(row(s, "detection_ms").agree);
    CHECK(row(s, "goodput_before_gbps").agree);
    CHECK(row(s, "failovers").agree);
    CHECK(s.agree());
  }
  SECTION("beyond 10 % or 2 ms, whichever is larger, they do not") {
    const auto s = compare("t", sims, 16384, {measured(23.0, 1.7), measured(23.5, 1.7), measured(22.5, 1.7)}, {});
    CHECK_FALSE(row(s, "detection_ms").agree);         // 3 ms over a 20 ms prediction: above both bounds
    CHECK_FALSE(row(s, "goodput_before_gbps").agree);  // 15 % under
    CHECK_FALSE(s.agree());
  }
  SECTION("each prediction is held against the run it was calibrated for") {
    // The load moved the third run's rate on both sides; the first two pairs disagree in
    // opposite directions. The medians alone (2.2 against 2.0) would agree; the pairs' median
    // difference (20 % under) does not.
    const std::vector<sim::RunSummary> drift = {predicted(20, 1.0), predicted(20, 2.0), predicted(20, 3.0)};
    auto s = compare("t", drift, 16384, {measured(20, 0.8), measured(20, 2.4), measured(20, 2.2)}, {});
    CHECK(row(s, "goodput_before_gbps").sim == Approx(2.0));
    CHECK(row(s, "goodput_before_gbps").hardware == Approx(2.2));
    CHECK_FALSE(row(s, "goodput_before_gbps").agree);
    // And where every pair agrees within 10 %, so does the row.
    s = compare("t", drift, 16384, {measured(20, 1.05), measured(20, 2.1), measured(20, 3.1)}, {});
    CHECK(row(s, "goodput_before_gbps").agree);
  }
  SECTION("a count agrees only exactly, and a run that failed is an outcome, not a figure") {
    auto lab = std::vector<conform::LabFailoverResult>{measured(20, 2), measured(20, 2), measured(20, 2)};
    lab[0].failovers = lab[1].failovers = 2;
    lab[2].receiver_exit = 14;
    const auto s = compare("t", sims, 16384, lab, {});
    CHECK_FALSE(row(s, "failovers").agree);
    CHECK(row(s, "failovers").hardware_runs.size() == 2);
    CHECK(s.hardware_outcome.find("failed") != std::string::npos);
    CHECK_FALSE(s.agree());
  }
}

TEST_CASE("validate model: a lab time after a fault the parent made is judged over the call that made it",
          "[validate]") {
  // The parent's nft or kill takes effect somewhere inside its call; the fault's instant is the
  // call's end, so a lab time after it may really be up to the call's length longer.
  const std::vector<sim::RunSummary> sims = {predicted(20.0, 2.0), predicted(20.0, 2.0), predicted(20.0, 2.0)};
  auto made_by_parent = [](double detection_ms, double call_ms) {
    conform::LabFailoverResult r = measured(detection_ms, 2.0);
    r.action_ns = {r.fault_ns};
    r.action_begun_ns = {r.fault_ns - static_cast<long long>(call_ms * 1e6)};
    return r;
  };
  SECTION("2.5 ms early after a 1 ms call: within 2 ms once the call is counted") {
    const auto s = compare("t", sims, 16384, {made_by_parent(17.5, 1), made_by_parent(17.5, 1), made_by_parent(17.5, 1)}, {});
    CHECK(row(s, "detection_ms").hardware == Approx(17.5));  // the figure itself is not moved
    CHECK(row(s, "detection_ms").agree);
    CHECK(std::any_of(s.lab_notes.begin(), s.lab_notes.end(), [](const std::string& n) {
      return n.find("run 1: the fault took effect within the 1.00 ms") != std::string::npos;
    }));
  }
  SECTION("the same early lab with an instant call, or side b's own link change, is early") {
    auto s = compare("t", sims, 16384, {made_by_parent(17.5, 0), made_by_parent(17.5, 0), made_by_parent(17.5, 0)}, {});
    CHECK_FALSE(row(s, "detection_ms").agree);
    s = compare("t", sims, 16384, {measured(17.5, 2.0), measured(17.5, 2.0), measured(17.5, 2.0)}, {});
    CHECK_FALSE(row(s, "detection_ms").agree);
  }
  SECTION("a failover inside the call is not a false one; one before the call began is") {
    // Seen on a loaded 2-core VM: nft calls of 25-62 ms, a failover 15 ms before one's end (the
    // fixture's fault is 20 ms after the clock's origin, so the call here is 18 ms).
    auto s = compare("t", sims, 16384, {made_by_parent(-15, 18), made_by_parent(20, 1), made_by_parent(20, 1)}, {});
    CHECK(row(s, "false_failovers").agree);
    s = compare("t", sims, 16384, {made_by_parent(-15, 10), made_by_parent(20, 1), made_by_parent(20, 1)}, {});
    CHECK_FALSE(row(s, "false_failovers").agree);
  }
  SECTION("a late lab gets no allowance from the call") {
    const auto s = compare("t", sims, 16384, {made_by_parent(22.5, 1), made_by_parent(22.5, 1), made_by_parent(22.5, 1)}, {});
    CHECK_FALSE(row(s, "detection_ms").agree);
  }
}

TEST_CASE("validate model: a connection the engine ended is an outcome both drivers name alike", "[validate]") {
  // Both paths dead: the sim's connection reports an error 220 ms after the fault; the lab's
  // sender exits 30 (its engine said every path is down) with side b clean.
  auto ended_sim = [](double error_ms, std::uint64_t delivered) {
    sim::RunSummary s = predicted(20.0, 2.0);
    s.outcome = sim::RunOutcome::ConnectionFailed;
    s.failed_at = ms(20) + Nanos{static_cast<std::int64_t>(error_ms * 1e6)};
    s.messages_delivered = delivered;
    s.delivered_after_fault = delivered - 300;
    s.lost = 1000 - delivered;
    return s;
  };
  auto ended_lab = [](double error_ms, std::uint64_t verified) {
    conform::LabFailoverResult r = measured(20.0, 2.0);
    r.sender_exit = 30;
    r.connection_failed = true;
    r.messages = 1000;
    r.verified = verified;
    r.warmup = 16;
    r.verified_at_fault = 284;  // 300 with the warm-up, as the sim's
    r.error_ns = r.fault_ns + static_cast<long long>(error_ms * 1e6);
    return r;
  };
  const std::vector<sim::RunSummary> sims = {ended_sim(220, 400), ended_sim(221, 410), ended_sim(219, 390)};
  // 100 messages after the fault on the sim (90-110); the lab's below.
  SECTION("the same end, at the same time, with as much through: agree") {
    const auto s = compare("t", sims, 16384, {ended_lab(225, 420), ended_lab(222, 380), ended_lab(230, 400)}, {});
    CHECK(s.sim_outcome == "connection-failed");
    CHECK(s.hardware_outcome == "connection-failed");
    CHECK(row(s, "error_reported_ms").agree);
    CHECK(row(s, "delivered_after_fault").agree);  // a rate times a time: within 10 % or a window
    for (const auto& r : s.rows) CHECK(r.metric != "lost");
    CHECK(s.agree());
  }
  SECTION("far more through after the fault on the lab disagrees") {
    const auto s = compare("t", sims, 16384, {ended_lab(220, 600), ended_lab(220, 610), ended_lab(220, 590)}, {});
    CHECK(row(s, "delivered_after_fault").hardware == Approx(300));
    CHECK_FALSE(row(s, "delivered_after_fault").agree);
    CHECK_FALSE(s.agree());
  }
  SECTION("the error reported much later on the lab disagrees") {
    const auto s = compare("t", sims, 16384, {ended_lab(420, 400), ended_lab(430, 400), ended_lab(410, 400)}, {});
    CHECK_FALSE(row(s, "error_reported_ms").agree);
    CHECK_FALSE(s.agree());
  }
  SECTION("a lab stream that was delivered where the sim ended is never agreement") {
    const auto s = compare("t", sims, 16384, {measured(20, 2), measured(20, 2), measured(20, 2)}, {});
    CHECK(s.hardware_outcome == "delivered");
    CHECK_FALSE(s.agree());
  }
  SECTION("side b finding a wrong message makes it a broken run, whatever the sender said") {
    auto lab = std::vector<conform::LabFailoverResult>{ended_lab(220, 400), ended_lab(220, 400), ended_lab(220, 400)};
    lab[1].receiver_exit = 13;
    const auto s = compare("t", sims, 16384, lab, {});
    CHECK(s.hardware_outcome.find("failed (sender exit 30, receiver exit 13)") != std::string::npos);
    CHECK_FALSE(s.agree());
  }
  SECTION("a sender that stalled with no error is the sim's hung") {
    auto lab = std::vector<conform::LabFailoverResult>{measured(20, 2)};
    lab[0].sender_exit = 24;
    lab[0].hung = true;
    lab[0].receiver_exit = 14;
    const auto s = compare("t", {sims.front()}, 16384, lab, {});
    CHECK(s.hardware_outcome == "hung");
  }
}

TEST_CASE("validate model: a rail the sides sent on while it was down returns at the next neighbour retry",
          "[validate]") {
  LabLink link = calibrated();
  link.neighbour_retry = ms(1000);
  FaultProfile f;
  LinkDown blip;
  blip.link = LinkRef{0, 0};
  blip.at = ms(20);
  blip.until = ms(30);
  f.downs.push_back(blip);
  LinkDown dies;  // a link that never returns is left alone
  dies.link = LinkRef{0, 1};
  dies.at = ms(500);
  f.downs.push_back(dies);
  std::vector<std::string> changes;
  SECTION("liveness on: the probes go out during the outage, so the return waits for the retry") {
    HaTunables t;
    t.liveness = true;
    const FaultProfile out = lab_link_outages(f, t, link, changes);
    REQUIRE(out.downs.size() == 2);
    CHECK(out.downs[0].until == std::nullopt);
    CHECK(out.downs[1].at == ms(20));
    CHECK(out.downs[1].until == ms(1020));
    CHECK(changes.size() == 1);
  }
  SECTION("liveness off and an outage shorter than TCP's retransmission: nothing is sent, nothing moves") {
    HaTunables t;
    t.liveness = false;
    const FaultProfile out = lab_link_outages(f, t, link, changes);
    REQUIRE(out.downs.size() == 2);
    CHECK(out.downs[1].until == ms(30));
    CHECK(changes.empty());
  }
  SECTION("liveness off, an outage past TCP's retransmission: the retry grid again (1.5 s -> 2 s)") {
    HaTunables t;
    t.liveness = false;
    f.downs[0].until = ms(1520);
    const FaultProfile out = lab_link_outages(f, t, link, changes);
    CHECK(out.downs[1].until == ms(2020));
  }
  SECTION("flaps whose returns reach the next down merge into one outage") {
    HaTunables t;
    t.liveness = true;
    FaultProfile g;
    LinkFlap fl;
    fl.link = LinkRef{0, 0};
    fl.start = ms(20);
    fl.period = ms(50);
    fl.down_for = ms(10);
    fl.count = 5;
    g.flaps.push_back(fl);
    const FaultProfile out = lab_link_outages(g, t, link, changes);
    CHECK(out.flaps.empty());
    REQUIRE(out.downs.size() == 1);
    CHECK(out.downs[0].at == ms(20));
    CHECK(out.downs[0].until == ms(1220));  // the last down (220 ms) plus one retry
  }
  SECTION("no retry measured: the profile as the file has it") {
    link.neighbour_retry = Nanos{0};
    HaTunables t;
    const FaultProfile out = lab_link_outages(f, t, link, changes);
    CHECK(out.downs[0].until == ms(30));
  }
}

TEST_CASE("validate model: a false failover under a disturbance is timed from its start on both drivers",
          "[validate]") {
  // A delay spike at 20 ms and no outage (v-delay-big): the sim's and the lab's detectors both
  // give up on the rail; when they did is compared like a detection.
  auto spiked = [](double false_ms, std::uint32_t failovers) {
    sim::RunSummary s = predicted(0, 2.0);
    s.fault_at.reset();
    s.disturbance_at = ms(20);
    s.failovers = s.false_failovers = failovers;
    if (failovers == 0) s.detected_at.reset();
    else s.detected_at = ms(20) + Nanos{static_cast<std::int64_t>(false_ms * 1e6)};
    return s;
  };
  const std::vector<sim::RunSummary> sims = {spiked(19.4, 1), spiked(19.7, 1), spiked(19.6, 1)};
  SECTION("the same verdict at the same time agrees") {
    const auto s = compare("t", sims, 16384, {measured(19.6, 2.0), measured(20.0, 2.0), measured(19.5, 2.0)}, {});
    CHECK(row(s, "false_failover_ms").sim == Approx(19.6));
    CHECK(row(s, "false_failover_ms").hardware == Approx(19.6));
    CHECK(row(s, "false_failover_ms").agree);
    CHECK(row(s, "false_failovers").agree);
    CHECK(s.agree());
  }
  SECTION("a sim that keeps the rail has no time to give: the row disagrees") {
    const std::vector<sim::RunSummary> kept = {spiked(0, 0), spiked(0, 0), spiked(0, 0)};
    const auto s = compare("t", kept, 16384, {measured(19.6, 2.0), measured(20.0, 2.0), measured(19.5, 2.0)}, {});
    CHECK_FALSE(row(s, "false_failover_ms").sim.has_value());
    CHECK_FALSE(row(s, "false_failover_ms").agree);
    CHECK_FALSE(row(s, "false_failovers").agree);
    CHECK_FALSE(s.agree());
  }
  SECTION("no failover on either side: no such row") {
    const std::vector<sim::RunSummary> kept = {spiked(0, 0), spiked(0, 0), spiked(0, 0)};
    auto lab = std::vector<conform::LabFailoverResult>{measured(0, 2.0), measured(0, 2.0), measured(0, 2.0)};
    for (auto& r : lab) {
      r.failovers = 0;
      r.detected_ns = -1;
    }
    const auto s = compare("t", kept, 16384, lab, {});
    CHECK(std::none_of(s.rows.begin(), s.rows.end(), [](const Row& r) { return r.metric == "false_failover_ms"; }));
    CHECK(s.agree());
  }
}

TEST_CASE("validate model: calibration's own rate over spans as long as the one before the fault", "[validate]") {
  LabLink link = calibrated();  // 16 KiB messages: 8 per 5 ms bin is 0.2097 Gb/s
  const double per_message_5ms = 16.0 * 1024 * 8 / 5e6;
  link.landed_per_bin = {64, 64, 120, 64, 56, 3};  // the last bin is cut short where the stream ended
  const auto one = window_rates(link, ms(5));
  REQUIRE(one);
  CHECK(one->first == Approx(56 * per_message_5ms));
  CHECK(one->second == Approx(120 * per_message_5ms));
  // 10 ms windows slide by one bin: (64+64), (64+120), (120+64), (64+56), over two bins each.
  const auto two = window_rates(link, ms(12));  // whole bins only: 12 ms is two of them
  REQUIRE(two);
  CHECK(two->first == Approx(120 * per_message_5ms / 2));
  CHECK(two->second == Approx(184 * per_message_5ms / 2));
  // The whole stream's five full bins, and nothing for a span longer than the stream.
  const auto all = window_rates(link, ms(25));
  REQUIRE(all);
  CHECK(all->first == Approx(all->second));
  CHECK(all->first == Approx(368 * per_message_5ms / 5));
  CHECK_FALSE(window_rates(link, ms(30)));
  CHECK(window_rates(link, ms(1)));  // under one bin: one bin
  link.landed_per_bin.clear();
  CHECK_FALSE(window_rates(link, ms(5)));
}

TEST_CASE("validate model: the share of a span both lab sides ran on one core", "[validate]") {
  conform::LabFailoverResult r;
  CHECK(r.shared_core(0, 100) == -1);           // no trail: not known
  r.sender.cpus = {{0, 0}, {50, 1}};            // cpu 0, then cpu 1 from t = 50
  r.receiver.cpus = {{10, 1}, {80, 0}};         // cpu 1 (also before its first note), cpu 0 from t = 80
  CHECK(r.shared_core(0, 100) == Approx(0.3));  // [50, 80) both on cpu 1
  CHECK(r.shared_core(50, 80) == Approx(1.0));
  CHECK(r.shared_core(80, 100) == Approx(0.0));
  CHECK(r.shared_core(100, 100) == -1);
}

TEST_CASE("validate model: the lab's rate before the fault spans what the sim's does, to when the fault was due",
          "[validate]") {
  // One-way-loss as the lab ran it on 2026-11-28: the nftables rule due 20 ms after the start took
  // effect 10 ms later, the stream slower meanwhile (the parent's nft beside the sides).
  conform::LabFailoverResult r;
  r.start_ns = 1'000'000'000;
  r.due_ns = r.start_ns + 20'000'000;
  r.fault_ns = r.start_ns + 30'000'000;
  r.verified_at_due = 256;    // 8 per 0.625 ms: 1.68 Gb/s of 16 KiB messages
  r.verified_at_fault = 320;  // 64 more in the 10 ms the rule took: 0.84 Gb/s
  const double gbps_16k = 16384.0 * 8 / 1e9;
  CHECK(conform::before_fault_gbps(r, 16384) == Approx(256 * gbps_16k / 0.020));
  // A link the receiving side set down itself took effect when due: the same either way.
  r.fault_ns = r.due_ns;
  r.verified_at_fault = r.verified_at_due;
  CHECK(conform::before_fault_gbps(r, 16384) == Approx(256 * gbps_16k / 0.020));
  // No due time reported: to the fault's effect. No fault: nothing.
  r.due_ns = -1;
  r.fault_ns = r.start_ns + 30'000'000;
  r.verified_at_fault = 320;
  CHECK(conform::before_fault_gbps(r, 16384) == Approx(320 * gbps_16k / 0.030));
  r.fault_ns = -1;
  CHECK(conform::before_fault_gbps(r, 16384) == 0);
}

TEST_CASE("validate model: the lab runs over the provider it calibrated, and shm only what reaches it", "[validate]") {
  const Scenario stall = scenario_file("peer-stall.toml");
  LabLink link = calibrated();
  link.provider = "shm";
  auto over_shm = lab_version(stall, link);
  REQUIRE(over_shm.ok());
  CHECK(over_shm->lab.provider == "shm");  // --provider reaches the lab's runs, not only its calibrations
  CHECK_THAT(over_shm->changes.front(), Catch::Contains("shm between the namespaces"));
  link.provider = "tcp;ofi_rxm";
  auto over_tcp = lab_version(stall, link);
  REQUIRE(over_tcp.ok());
  CHECK(over_tcp->lab.provider == "tcp;ofi_rxm");
  CHECK_THAT(over_tcp->changes.front(), Catch::Contains("tcp;ofi_rxm over veth"));
  // A stalled process runs over shm; a link, a loss or a delay never reaches shared memory.
  CHECK_FALSE(not_runnable(stall, "shm").has_value());
  for (const char* network : {"primary-dies.toml", "link-flap.toml", "one-way-loss.toml", "delay-spike.toml"}) {
    INFO(network);
    CHECK_THAT(not_runnable(scenario_file(network), "shm").value_or(""), Catch::Contains("over shm"));
    CHECK_FALSE(not_runnable(scenario_file(network), "tcp;ofi_rxm").has_value());
  }
}
