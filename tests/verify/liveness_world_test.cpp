// The rail-liveness detector in the liveness world (verify/liveness_world.hpp): its two promises
// hold over every timing of the bound, and dropping its RTT adaptation breaks the first.
#include "verify/liveness_world.hpp"

#include <catch2/catch.hpp>

#include "verify/explorer.hpp"
#include "verify/failover_invariants.hpp"
#include "verify/failover_world.hpp"

using namespace railcheck;
using namespace railcheck::verify;

namespace {

SearchResult<LivenessWorld> check_liveness(const LivenessModel& m) {
  SearchLimits lim;
  lim.mode = SearchMode::Bfs;  // the shortest counterexample, if any
  lim.max_states = 5'000'000;
  lim.max_depth = 1000;
  return explore<LivenessWorld>(LivenessWorld(m), liveness_invariants(), lim);
}

std::string explain_liveness(const SearchResult<LivenessWorld>& r) {
  if (!r.violation) return "clean";
  return r.violation->invariant + ": " + r.violation->message + " after " + std::to_string(r.violation->steps.size()) +
         " steps";
}

}  // namespace

TEST_CASE("the liveness world exhausts its bound clean: no false verdict and a dead rail found in time",
          "[verify][liveness]") {
  const LivenessModel m;
  const auto r = check_liveness(m);
  INFO(explain_liveness(r) << "; " << r.stats.distinct << " states in " << r.stats.seconds << " s");
  CHECK_FALSE(r.violation);
  CHECK(r.stats.exhausted);
  CHECK(r.stats.distinct > 1000);  // the bound is not trivial
}

TEST_CASE("round trips up to 8 times the probe timeout floor never make a live rail dead", "[verify][liveness]") {
  LivenessModel m;
  m.deaths = 0;
  m.rtt_max = ms(16);  // 8 x the 2 ms floor; a silent rail is dead after (misses + 1) x 2 ms = 6 ms
  m.horizon = ms(70);
  const auto r = check_liveness(m);
  INFO(explain_liveness(r) << "; " << r.stats.distinct << " states");
  CHECK_FALSE(r.violation);
  CHECK(r.stats.exhausted);
}

TEST_CASE("the mutation drop-rtt-adaptation trips no-false-verdict", "[verify][liveness][mutation]") {
  LivenessModel m;
  m.mutation = Mutation::DropRttAdaptation;
  const auto r = check_liveness(m);
  REQUIRE(r.violation);
  INFO(explain_liveness(r));
  CHECK(r.violation->invariant == "no-false-verdict");
  // Round trips climb 1 ms per probe from 1 ms; with the timeout stuck at the 2 ms floor, a
  // probe that takes longer than misses x 2 ms = 4 ms is given up on: the counterexample is short.
  CHECK(r.violation->steps.size() < 60);
}

TEST_CASE("a jump in round trip beyond the bound is what a fast detector cannot tell from death",
          "[verify][liveness]") {
  // The bound's second half is needed: with round trips free to jump from 1 ms to 10 ms in one
  // probe, the detector (rightly fast) calls the rail dead. This pins down why the bound says so.
  LivenessModel m;
  m.deaths = 0;
  m.rtt_step = ms(9);
  const auto r = check_liveness(m);
  REQUIRE(r.violation);
  CHECK(r.violation->invariant == "no-false-verdict");
}

TEST_CASE("exactly-once holds when the liveness detector starts the failover", "[verify][liveness]") {
  // The failover world with the senders' detectors on, one way at the standard bound (3 paths,
  // 3 messages, 2 rail deaths, 2 losses, 2 timer races; 81 528 states, ~1 s): a rail death is
  // found by the detector (20 ms) long before the HCA's window (537 ms), so its verdict starts
  // the failover sequence, racing losses, timers and the second death.
  FailoverModel m;
  m.name = "liveness-failover";
  m.paths = 3;
  m.messages = 3;
  m.bidirectional = false;
  m.link_failures = 2;
  m.losses = 2;
  m.timer_races = 2;
  m.probes = true;
  m.tunables.replay = ReplayPolicy::Resync;
  SearchLimits lim;
  lim.max_states = 5'000'000;
  const auto clean = explore<FailoverWorld>(FailoverWorld(m), failover_invariants(), lim);
  INFO((clean.violation ? clean.violation->invariant + ": " + clean.violation->message : "clean")
       << "; " << clean.stats.distinct << " states in " << clean.stats.seconds << " s");
  CHECK_FALSE(clean.violation);
  CHECK(clean.stats.exhausted);

  // And the verdict does happen in that bound: an invariant that forbids it is broken.
  const std::vector<Invariant<FailoverWorld>> no_verdict = {
      {"no-liveness-failover", "", [](const FailoverWorld& w, bool) -> std::optional<std::string> {
         for (const auto& c : w.conns())
           for (const auto& f : c.failovers)
             if (f.trigger.rfind(to_string(FailoverTrigger::RailDead), 0) == 0) return f.trigger;
         return std::nullopt;
       }}};
  const auto found = explore<FailoverWorld>(FailoverWorld(m), no_verdict, lim);
  REQUIRE(found.violation);
  CHECK_THAT(found.violation->message, Catch::Contains("probe"));
}
