#include <algorithm>
#include <catch2/catch.hpp>

#include "verify/imm/arrival_enumerator.hpp"

using namespace railcheck;
using namespace railcheck::imm;

namespace {

ImmCheckReport check(std::uint32_t writes, ReplayPolicy policy, bool failover) {
  auto r = check_every_order({writes, policy, failover});
  REQUIRE(r.ok());
  INFO(r->summary());
  return r.value();
}

const InvariantFinding& finding(const ImmCheckReport& r, ImmInvariant inv) {
  return r.findings[static_cast<std::size_t>(inv)];
}

}  // namespace

TEST_CASE("without a failover every arrival order and expectation point fires exactly once, after the last write") {
  // 4 writes: 4! orders x 5 expectation points.
  const auto r = check(4, ReplayPolicy::Naive, false);
  INFO(r.summary());
  CHECK(r.schedules == 24 * 5);
  CHECK(r.clean());
}

TEST_CASE("resync holds every ImmCounter invariant under every fate and arrival order") {
  for (std::uint32_t n = 1; n <= 3; ++n) {
    const auto r = check(n, ReplayPolicy::Resync, true);
    INFO("writes " << n << "\n" << r.summary());
    CHECK(r.clean());
    CHECK(r.schedules > 0);
  }
}

TEST_CASE("naive replay double-counts a write whose ACK was lost and can fire before a lost write lands") {
  const auto r = check(2, ReplayPolicy::Naive, true);
  INFO(r.summary());
  const auto& dup = finding(r, ImmInvariant::NoDoubleCount);
  REQUIRE(dup.first);
  const auto again = violated(run_schedule(*dup.first));  // the counterexample replays
  CHECK(std::find(again.begin(), again.end(), ImmInvariant::NoDoubleCount) != again.end());
  const auto& early = finding(r, ImmInvariant::FiresAfterEveryWrite);
  REQUIRE(early.first);
  // The early fire needs a write that never landed before the duplicate completed the count.
  bool some_lost = false;
  for (WriteFate f : early.first->fates) some_lost |= f == WriteFate::Lost || f == WriteFate::LateOnDeadPath;
  CHECK(some_lost);
  CHECK(finding(r, ImmInvariant::FiresExactlyOnce).schedules > 0);  // held duplicates overshoot a late expectation
}

TEST_CASE("probe replay double-counts only a write still in flight on the dead path") {
  const auto r = check(2, ReplayPolicy::Probe, true);
  INFO(r.summary());
  const auto& dup = finding(r, ImmInvariant::NoDoubleCount);
  REQUIRE(dup.first);
  bool late = false;
  for (WriteFate f : dup.first->fates) late |= f == WriteFate::LateOnDeadPath;
  CHECK(late);
  // With no late write, probe is as safe as resync: check the single-fate worlds by hand.
  for (WriteFate f : {WriteFate::Acked, WriteFate::AckLost, WriteFate::Lost}) {
    Schedule s{ReplayPolicy::Probe, {f, WriteFate::Lost}, {}, 0, 0};
    if (f != WriteFate::Lost) s.landings.push_back({0, false});
    s.decided_at = s.landings.size();
    for (std::uint32_t seq : writes_to_replay(ReplayPolicy::Probe, s.fates)) s.landings.push_back({seq, true});
    INFO(describe(s));
    CHECK(violated(run_schedule(s)).empty());
  }
}

TEST_CASE("a counterexample names the policy, the fates and the order") {
  const Schedule s{ReplayPolicy::Naive, {WriteFate::AckLost}, {{0, false}, {0, true}}, 1, 0};
  CHECK(describe(s) == "naive: fates [ack-lost] | expect w0 | decide | w0'");
  const auto o = run_schedule(s);
  CHECK(o.max_counted_copies == 2);
  CHECK(violated(o) == std::vector<ImmInvariant>{ImmInvariant::NoDoubleCount});
}

TEST_CASE("the enumerator refuses sizes it cannot finish") {
  CHECK_FALSE(check_every_order({0, ReplayPolicy::Resync, true}).ok());
  CHECK_FALSE(check_every_order({9, ReplayPolicy::Resync, true}).ok());
}
