// An RC ACK travels back from the responder's NIC to the requester's over the same rail: the
// responder's up-link and the requester's down-link (wire.hpp). If the rail dies while the ACK is
// on its way, the ACK is lost although the data landed: the requester retries, gives up or fails
// over, and replays a message the receiver already has, which it must drop. This is the case that
// tests exactly-once delivery on a failover, so both wires must model it.
//
// SimGrid 3.32 turns a split-duplex link off by turning off its two directions only
// (SplitDuplexLinkImpl::turn_off); the link's own is_on() stays true. A check of that flag sees
// every route up, and every ACK in flight on a dead rail arrived (the bug fixed on issue 45).
#include <catch2/catch.hpp>

#include "backends/sim/sim_run.hpp"
#include "models/scenario.hpp"

using namespace railcheck;
using sim::WireMode;

namespace {

// Two ranks on two rails, one 64 KiB message from rank 0 to rank 1, rail 0 the primary.
Scenario one_message() {
  Scenario sc;
  sc.name = "ack-flight";
  sc.topology.ranks = 2;
  sc.topology.rails = 2;
  sc.topology.paths_per_conn = 2;
  sc.topology.nic = *find_nic_preset("cx7-400g");
  sc.workload.pattern = TrafficPattern::Unidirectional;
  sc.workload.messages = 1;
  sc.workload.message_bytes = 64 << 10;
  sc.workload.window = 1;
  sc.time_limit = sec(10);
  return sc;
}

}  // namespace

TEST_CASE("an ACK on its way back over a rail that dies is lost, and the message is delivered once", "[sim][wire]") {
  for (const WireMode wire : {WireMode::Sendto, WireMode::Mailbox, WireMode::Event}) {
    INFO("wire " << sim::to_string(wire) << "; replay with RAILCHECK_SIM_WIRE=" << sim::to_string(wire));
    // Without a fault the run ends when the ACK reaches rank 0: it left rank 1's NIC one one-way
    // latency earlier (two hops of 1 us on cx7-400g).
    const Scenario clean = one_message();
    const auto quiet = sim::run_scenario(clean, 1, {}, wire).summary;
    REQUIRE(quiet.outcome == sim::RunOutcome::Delivered);
    REQUIRE(quiet.counters.retransmissions == 0);
    const Nanos acked = quiet.end_time;
    const Nanos one_way = 2 * clean.topology.nic.link_latency;

    SECTION("the receiver's link dies mid-flight") {
      Scenario sc = clean;
      sc.faults.downs.push_back(LinkDown{LinkRef{1, 0}, acked - one_way / 2, std::nullopt});
      const auto s = sim::run_scenario(sc, 1, {}, wire).summary;
      INFO(sim::to_text(s));
      CHECK(s.counters.retransmissions >= 1);  // the ACK was lost: the requester sent again
      CHECK(s.failovers == 1);                 // no answer on rail 0: the liveness detector moves the stream
      // The resync policy asks the receiver what landed: the message did, so nothing is replayed.
      CHECK(s.wrs_replayed == 0);
      CHECK(s.outcome == sim::RunOutcome::Delivered);
      CHECK(s.messages_delivered == 1);
      CHECK(s.duplicates == 0);
    }
    SECTION("the link dies just after the ACK arrived") {
      Scenario sc = clean;
      sc.faults.downs.push_back(LinkDown{LinkRef{1, 0}, acked + Nanos{1}, std::nullopt});
      const auto s = sim::run_scenario(sc, 1, {}, wire).summary;
      INFO(sim::to_text(s));
      CHECK(s.counters.retransmissions == 0);
      CHECK(s.wrs_replayed == 0);
      CHECK(s.outcome == sim::RunOutcome::Delivered);
      CHECK(s.messages_delivered == 1);
    }
  }
}
