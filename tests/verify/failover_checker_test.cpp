// The model checker on the real failover engine: the seed's naive replay rule is caught, the
// safe policies exhaust their bounds clean, and every invariant catches a deliberately broken
// engine variant (a mutation) — an invariant no mutation trips would prove nothing.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "models/scenario.hpp"
#include "tests/verify/parallel_bfs/same_result.hpp"
#include "verify/check_spec.hpp"
#include "verify/counterexample.hpp"
#include "verify/failover_invariants.hpp"
#include "verify/trace_to_scenario.hpp"

namespace {

using namespace railcheck;
using namespace railcheck::verify;

using testing::kMutationCases;
using testing::mutated;
using testing::small_failover_model;

SearchResult<FailoverWorld> check(const FailoverModel& m, SearchMode mode = SearchMode::Dfs, bool symmetry = false) {
  SearchLimits lim;
  lim.mode = mode;
  lim.max_states = 3'000'000;
  FailoverWorld root(m);
  root.set_symmetry(symmetry);
  return explore<FailoverWorld>(root, failover_invariants(), lim);
}

std::string explain(const SearchResult<FailoverWorld>& r, const FailoverModel& m) {
  if (!r.violation) return "no violation";
  FailoverTrace t{m, r.violation->steps, r.violation->invariant, r.violation->message};
  std::string s = fmt::format("{}: {}\n", r.violation->invariant, r.violation->message);
  if (auto out = replay_trace(t, failover_invariants()))
    for (const auto& l : out.value().lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("the naive replay rule delivers a message twice, the shortest trace shows how, and replays") {
  const FailoverModel m = small_failover_model(ReplayPolicy::Naive);
  const auto r = check(m, SearchMode::Bfs);
  REQUIRE(r.violation);
  CHECK(r.violation->invariant == "exactly-once-in-order");
  CHECK_THAT(r.violation->message, Catch::Contains("delivered twice"));
  // The trace file round trip, then a replay that reproduces the same violation.
  const FailoverTrace t{m, r.violation->steps, r.violation->invariant, r.violation->message};
  auto back = read_trace_json(write_trace_json(t), "memory");
  REQUIRE(back);
  CHECK(back.value().steps == t.steps);
  auto replayed = replay_trace(back.value(), failover_invariants());
  REQUIRE(replayed);
  CHECK(replayed.value().invariant == std::optional<std::string>("exactly-once-in-order"));
  CHECK(replayed.value().steps_run == t.steps.size());
}

TEST_CASE("the same steps under resync are not even possible: resync's protocol differs at failover") {
  const FailoverModel m = small_failover_model(ReplayPolicy::Naive);
  const auto r = check(m, SearchMode::Bfs);
  REQUIRE(r.violation);
  FailoverTrace t{m, r.violation->steps, "", ""};
  t.model.tunables.replay = ReplayPolicy::Resync;
  auto replayed = replay_trace(t, failover_invariants());
  // After the failover the receiver waits for a ResyncRequest, not a FailoverNotice: the trace
  // diverges, and replay says at which step instead of running on.
  REQUIRE_FALSE(replayed);
  CHECK_THAT(replayed.error().what, Catch::Contains("is not possible here"));
  CHECK_THAT(replayed.error().hint, Catch::Contains("changed since the trace was recorded"));
}

TEST_CASE("resync and probe exhaust the small bound with no violation") {
  for (const auto p : {ReplayPolicy::Resync, ReplayPolicy::Probe}) {
    const FailoverModel m = small_failover_model(p);
    const auto r = check(m);
    INFO(to_string(p) << ": " << explain(r, m));
    CHECK_FALSE(r.violation);
    CHECK(r.stats.exhausted);
    CHECK(r.stats.distinct > 1000);
  }
}

TEST_CASE("resync exhausts the standard bound with no violation") {
  const FailoverModel m = [] {
    FailoverModel s = standard_bound(ReplayPolicy::Resync);
    s.bidirectional = false;
#ifdef RAILCHECK_SANITIZE
    // The sanitizer build checks memory safety on the same code paths; the full bound (110 k
    // states, ~3 s optimised) would take minutes there, so it explores a smaller one.
    s.losses = 1;
    s.timer_races = 1;
#endif
    return s;
  }();
  const auto r = check(m);
  INFO(explain(r, m));
  CHECK_FALSE(r.violation);
  CHECK(r.stats.exhausted);
}

TEST_CASE("both directions over shared rails exhaust a small bound with no violation") {
  FailoverModel m = small_failover_model(ReplayPolicy::Resync);
  m.bidirectional = true;
#ifdef RAILCHECK_SANITIZE
  m.losses = 0;  // see the standard-bound test: a smaller bound under the sanitizers
#endif
  const auto r = check(m);
  INFO(explain(r, m));
  CHECK_FALSE(r.violation);
  CHECK(r.stats.exhausted);
}

TEST_CASE("each invariant catches the broken engine variant aimed at it") {
  for (const auto& c : kMutationCases) {
    const FailoverModel m = mutated(c);
    const auto r = check(m, SearchMode::Bfs);
    INFO(to_string(c.mutation) << " -> " << explain(r, m));
    REQUIRE(r.violation);
    CHECK(r.violation->invariant == c.invariant);
  }
}

TEST_CASE("a soft RTO below the hardware retry window is caught pre-empting the HCA") {
  FailoverModel m = small_failover_model(ReplayPolicy::Resync);
  m.tunables.soft_rto = ms(100);  // the HCA retries for 537 ms with the default QP settings
  const auto r = check(m, SearchMode::Bfs);
  INFO(explain(r, m));
  REQUIRE(r.violation);
  CHECK(r.violation->invariant == "failover-after-hardware-window");
}

TEST_CASE("engine state fingerprints: equal for equal histories, different after a change") {
  const FailoverModel m = small_failover_model(ReplayPolicy::Resync);
  FailoverWorld a(m), b(m);
  CHECK(a.fingerprint() == b.fingerprint());
  const auto options = a.choices();
  REQUIRE_FALSE(options.empty());
  a.apply(options.front());
  CHECK(a.fingerprint() != b.fingerprint());
  b.apply(options.front());
  CHECK(a.fingerprint() == b.fingerprint());
}

TEST_CASE("choices have a stable text form that parses back") {
  using K = Choice::Kind;
  const Choice all[] = {{K::Data, 1, 2, 0, 3},
                        {K::Ack, 0, 1},
                        {K::RecvCqe, 0, 2},
                        {K::Control, 1, 3, 1},
                        {K::Timer},
                        {K::KillLink, 0, 2},
                        {K::RepairLink, 0, 1},
                        {K::LoseData, 0, 0},
                        {K::LoseAck, 1, 1},
                        {K::LoseControl, 0, 2, 0},
                        {K::Retransmit, 0, 1},
                        {K::Isend, 1},
                        {K::Irecv, 0}};
  for (const auto& c : all) {
    INFO(to_string(c));
    const auto back = parse_choice(to_string(c));
    REQUIRE(back);
    CHECK(*back == c);
  }
  CHECK_FALSE(parse_choice(""));
  CHECK_FALSE(parse_choice("fly c0"));
  CHECK_FALSE(parse_choice("data c0"));        // the path is required
  CHECK_FALSE(parse_choice("kill p1 extra"));  // trailing garbage
  CHECK_FALSE(parse_choice("data c999 p0"));   // out of range
}

TEST_CASE("malformed trace files are rejected with a clear line") {
  CHECK_THAT(read_trace_json("{", "t.json").error().what, Catch::Contains("t.json: not JSON"));
  CHECK_THAT(read_trace_json(R"({"railcheck_trace": 2})", "t.json").error().what,
             Catch::Contains("not a railcheck failover trace"));
  const FailoverModel m = small_failover_model(ReplayPolicy::Resync);
  std::string text = write_trace_json({m, {Choice{Choice::Kind::Timer}}, "", ""});
  const auto at = text.find("\"timer\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 7, "\"warp 9\"");
  CHECK_THAT(read_trace_json(text, "t.json").error().what, Catch::Contains("step 0: cannot read \"warp 9\""));
}

TEST_CASE("a trace's rail deaths become a scenario with the same faults at the same times") {
  FailoverModel m = small_failover_model(ReplayPolicy::Probe);
  m.tunables.heartbeat_interval = ms(250);
  // Replay the shortest naive counterexample's steps under this model until its kill.
  const auto r = check(small_failover_model(ReplayPolicy::Naive), SearchMode::Bfs);
  REQUIRE(r.violation);
  const FailoverTrace t{m, r.violation->steps, "x", ""};
  const auto sc = trace_to_scenario(t);
  INFO(sc.toml);
  auto loaded = load_scenario_string(sc.toml, "generated.toml");
  REQUIRE(loaded);
  const Scenario& s = loaded.value();
  CHECK(s.topology.paths_per_conn == 2);
  CHECK(s.workload.messages == 2);
  CHECK(s.engine.replay == ReplayPolicy::Probe);
  CHECK(s.engine.heartbeat_interval == ms(250));
  REQUIRE(s.faults.downs.size() == sc.faults);
  CHECK(sc.faults >= 1);
}

TEST_CASE("the shipped probe trace: a probe that overtakes the receiver's poll duplicates a message") {
  // docs/verify.md, finding 3: inherent to the probe design (it assumes the receiver polls
  // within probe_delay). Under resync the same steps are impossible: the receiver must drain
  // the failed QP, polling the completion first.
  auto t = read_trace_file(RAILCHECK_SOURCE_DIR "/verify/traces/probe-slow-poll.trace.json");
  REQUIRE(t);
  auto probe = replay_trace(t.value(), failover_invariants());
  REQUIRE(probe);
  CHECK(probe.value().invariant == std::optional<std::string>("exactly-once-in-order"));
  FailoverTrace resync = t.value();
  resync.model.tunables.replay = ReplayPolicy::Resync;
  auto r = replay_trace(resync, failover_invariants());
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().what, Catch::Contains("possible: cqe c0 p0"));
}

// ---- the symmetry reduction (docs/verify.md, "Symmetry reduction") ----

namespace {

// The sanitizer tree (ASan+UBSan at -O1) explores about a tenth as many states per second as the
// optimised tree, so there these tests take the same code paths at a smaller bound: one loss and
// one timer race, and no loss at all where both directions run (their state space is nearly the
// product of the two connections'). The optimised tree runs every bound as written.
FailoverModel sanitizer_sized(FailoverModel m) {
#ifdef RAILCHECK_SANITIZE
  m.losses = m.bidirectional ? 0u : std::min(m.losses, 1u);
  m.timer_races = std::min(m.timer_races, 1u);
#endif
  return m;
}

FailoverModel model_file(const std::string& name) {
  auto spec = load_check_spec_file(RAILCHECK_SOURCE_DIR "/verify/models/" + name + ".toml");
  REQUIRE(spec);
  return sanitizer_sized(spec.value().model);
}

// The counterexample, written as a trace file and read back, replays to the same violation.
void require_replays(const FailoverModel& m, const Counterexample<FailoverWorld>& v) {
  auto back = read_trace_json(write_trace_json({m, v.steps, v.invariant, v.message}), "memory");
  REQUIRE(back);
  auto replayed = replay_trace(back.value(), failover_invariants());
  REQUIRE(replayed);
  CHECK(replayed.value().invariant == std::optional<std::string>(v.invariant));
  CHECK(replayed.value().steps_run == v.steps.size());
}

}  // namespace

TEST_CASE("a state and its mirror image (the connections swapped) share a fingerprint with symmetry on") {
  FailoverModel m = small_failover_model(ReplayPolicy::Resync);
  m.bidirectional = true;
  FailoverWorld a(m), b(m);
  // The first control message of each connection (the handshake), delivered on one only.
  Choice first{Choice::Kind::Control, 0, 0, 0};
  for (const auto& c : a.choices())
    if (c.kind == Choice::Kind::Control && c.conn == 0) first = c;
  Choice mirror = first;
  mirror.conn = 1;
  a.apply(first);
  b.apply(mirror);
  CHECK(a.fingerprint() != b.fingerprint());
  a.set_symmetry(true);
  b.set_symmetry(true);
  CHECK(a.fingerprint() == b.fingerprint());
  // Still a fingerprint of the state: the mirror of a different state differs.
  FailoverWorld c(m);
  c.set_symmetry(true);
  CHECK(c.fingerprint() != a.fingerprint());
}

TEST_CASE("the symmetry reduction gives each standard model's verdict with fewer distinct states") {
  for (const char* name : {"standard-resync", "bidirectional"}) {
    const FailoverModel m = model_file(name);
    const auto off = check(m, SearchMode::Dfs, false);
    const auto on = check(m, SearchMode::Dfs, true);
    INFO(name << ": " << off.stats.distinct << " distinct states without, " << on.stats.distinct << " with; "
              << explain(on, m));
    CHECK_FALSE(off.violation);
    CHECK_FALSE(on.violation);
    CHECK(off.stats.exhausted);
    CHECK(on.stats.exhausted);
    CHECK(on.stats.distinct < off.stats.distinct);
  }
  // The naive rule's duplicate, one way and both ways: found either way, and the reduced
  // search's counterexample is a real run that replays.
  for (const bool both : {false, true}) {
    FailoverModel m = small_failover_model(ReplayPolicy::Naive);  // the bfs holds whole levels: a small bound
    m.bidirectional = both;
    m = sanitizer_sized(m);
    const auto off = check(m, SearchMode::Bfs, false);
    const auto on = check(m, SearchMode::Bfs, true);
    INFO((both ? "both ways: " : "one way: ") << explain(on, m));
    REQUIRE(off.violation);
    REQUIRE(on.violation);
    CHECK(on.violation->invariant == off.violation->invariant);
    CHECK(on.violation->steps.size() == off.violation->steps.size());  // bfs: the shortest either way
    require_replays(m, *on.violation);
  }
}

TEST_CASE("every seeded mutation is found with the symmetry reduction on, one way and both ways, and replays") {
  std::vector<std::pair<std::string, FailoverModel>> models;
  for (const auto& c : kMutationCases) models.emplace_back(c.invariant, mutated(c));
  FailoverModel early_rto = small_failover_model(ReplayPolicy::Resync);
  early_rto.tunables.soft_rto = ms(100);  // below the HCA's 537 ms retry window
  models.emplace_back("failover-after-hardware-window", early_rto);
  for (auto [invariant, m] : models) {
    for (const bool both : {false, true}) {
      m.bidirectional = both;
      const FailoverModel sized = sanitizer_sized(m);
      const auto r = check(sized, SearchMode::Bfs, true);
      INFO(to_string(m.mutation) << (both ? ", both ways" : ", one way") << " -> " << explain(r, sized));
      REQUIRE(r.violation);
      CHECK(r.violation->invariant == invariant);
      require_replays(sized, *r.violation);
    }
  }
}
