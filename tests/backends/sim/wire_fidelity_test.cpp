// The two wires of the SimGrid driver (WireMode, issue 15) must simulate the same run: the new
// one changes what SimGrid pays per packet, never what happens. Each case runs a scenario on
// both and compares outcomes exactly and simulated instants within kTolerance.
//
// Tolerance: zero. Both wires hand SimGrid's network model the same transfer (same NIC hosts,
// same bytes, started at the same instant), so a flow's start and end are the same doubles; the
// engines see the same events at the same instants, and every trace note, counter and time
// below must match to the nanosecond. A non-zero difference means the driver changed what is
// simulated, which is a bug, not noise.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "backends/sim/sim_run.hpp"
#include "models/scenario.hpp"

using namespace railcheck;
using sim::WireMode;

namespace {

constexpr Nanos kTolerance{0};

void check_same_instant(const char* what, std::optional<Nanos> a, std::optional<Nanos> b) {
  INFO(what);
  REQUIRE(a.has_value() == b.has_value());
  if (a) CHECK(std::abs((*a - *b).count()) <= kTolerance.count());
}

// Runs `sc` on both wires and compares every figure a user reads off a run.
void check_wires_agree(const Scenario& sc, std::uint64_t seed) {
  const auto old_run = sim::run_scenario(sc, seed, {}, WireMode::Sendto);
  const auto new_run = sim::run_scenario(sc, seed, {}, WireMode::Mailbox);
  const auto& a = old_run.summary;
  const auto& b = new_run.summary;
  INFO("scenario " << sc.name << " seed " << seed << "; replay one wire with RAILCHECK_SIM_WIRE=sendto|mailbox "
                   << "railcheck run <file> --seed " << seed << "\nsendto:\n"
                   << sim::to_text(a) << "mailbox:\n"
                   << sim::to_text(b));
  // Outcomes: identical.
  CHECK(a.outcome == b.outcome);
  CHECK(a.outcome_detail == b.outcome_detail);
  CHECK(a.detected_by == b.detected_by);
  CHECK(a.failovers == b.failovers);
  CHECK(a.wrs_replayed == b.wrs_replayed);
  CHECK(a.recvs_reposted == b.recvs_reposted);
  CHECK(a.false_alarms == b.false_alarms);
  CHECK(a.rto_widenings == b.rto_widenings);
  CHECK(a.connections_failed == b.connections_failed);
  CHECK(a.connections_switched == b.connections_switched);
  CHECK(a.messages_delivered == b.messages_delivered);
  CHECK(a.duplicates == b.duplicates);
  CHECK(a.misplaced == b.misplaced);
  CHECK(a.lost == b.lost);
  CHECK(a.counters.events == b.counters.events);
  CHECK(a.counters.data_packets == b.counters.data_packets);
  CHECK(a.counters.retransmissions == b.counters.retransmissions);
  CHECK(a.counters.rnr_naks == b.counters.rnr_naks);
  CHECK(a.counters.control_messages == b.counters.control_messages);
  CHECK(a.counters.control_lost == b.counters.control_lost);
  // Simulated instants: within kTolerance.
  check_same_instant("end of run", a.end_time, b.end_time);
  check_same_instant("fault detected", a.detected_at, b.detected_at);
  check_same_instant("path switched", a.switched_at, b.switched_at);
  // Every engine trace note, in order.
  REQUIRE(old_run.traces.size() == new_run.traces.size());
  for (std::size_t i = 0; i < old_run.traces.size(); ++i) {
    const auto& x = old_run.traces[i];
    const auto& y = new_run.traces[i];
    INFO("trace note " << i << ": " << to_string(x.note.kind) << " / " << to_string(y.note.kind));
    REQUIRE(std::abs((x.at - y.at).count()) <= kTolerance.count());
    REQUIRE(x.rank == y.rank);
    REQUIRE(x.conn == y.conn);
    REQUIRE(x.note.kind == y.note.kind);
    REQUIRE(x.note.path.value == y.note.path.value);
    REQUIRE(x.note.count == y.note.count);
  }
}

Scenario shipped(const std::string& name) {
  auto sc = load_scenario_file(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/" + name);
  INFO((sc ? std::string() : sc.error().message()));
  REQUIRE(sc.ok());
  return sc.value();
}

}  // namespace

TEST_CASE("wires agree on every shipped failover scenario", "[sim][wire]") {
#ifdef RAILCHECK_SANITIZE
  // The sanitizer tree runs SimGrid's actors on threads: the four long scenarios below take
  // 34-64 s each there (2026-11-25), 170 s of the tree's test time for a comparison of two wires'
  // figures, which the optimised tree makes on all six. Here two short failover scenarios keep
  // both wires' code under ASan and UBSan.
  const char* names[] = {"both-paths-die.toml", "standby-dies-during-failover.toml"};
#else
  const char* names[] = {"primary-dies.toml",
                         "short-flap.toml",
                         "both-paths-die.toml",
                         "standby-dies-during-failover.toml",
                         "standby-dies-three-paths.toml",
                         "slow-receiver-rnr.toml"};
#endif
  for (const char* name : names) {
    SECTION(name) {
      const Scenario sc = shipped(name);
      check_wires_agree(sc, sc.seed);
    }
  }
}

TEST_CASE("wires agree on a small sim_scale ring with a dead rail", "[sim][wire]") {
  // bench/sim_scale's world at 16 ranks x 4 rails: 128 connections, rank 0's rail-0 link dies.
  Scenario sc;
  sc.name = "small-scale";
  sc.topology.ranks = 16;
  sc.topology.rails = 4;
  sc.topology.paths_per_conn = 2;
  sc.topology.nic = *find_nic_preset("cx7-400g");
  sc.workload.messages = 4;
  sc.workload.message_bytes = 4 << 20;
  sc.workload.window = 4;
  sc.workload.channels = sc.topology.rails;
  sc.faults.downs.push_back(LinkDown{LinkRef{0, 0}, us(200), std::nullopt});
  sc.time_limit = sec(30);
  check_wires_agree(sc, 1);
}

TEST_CASE("the wire is chosen by RAILCHECK_SIM_WIRE and a bad value is an error", "[sim][wire]") {
  CHECK(sim::parse_wire_mode("mailbox") == WireMode::Mailbox);
  CHECK(sim::parse_wire_mode("sendto") == WireMode::Sendto);
  CHECK_FALSE(sim::parse_wire_mode("per-wr").has_value());
  CHECK(sim::to_string(WireMode::Sendto) == "sendto");
  ::setenv("RAILCHECK_SIM_WIRE", "sendto", 1);
  CHECK(sim::default_wire_mode().value() == WireMode::Sendto);
  ::setenv("RAILCHECK_SIM_WIRE", "per-wr", 1);
  const auto bad = sim::default_wire_mode();
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message(),
             Catch::Contains("RAILCHECK_SIM_WIRE=per-wr") && Catch::Contains("mailbox or sendto"));
  ::unsetenv("RAILCHECK_SIM_WIRE");
  CHECK(sim::default_wire_mode().value() == WireMode::Mailbox);
}
