#include "engine/failover/rail_liveness.hpp"

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <optional>

using namespace railcheck;

namespace {

// Drives a detector the way HaConnection does, on a rail whose n-th probe is answered after
// rtt(n) (nullopt: never), with a data completion at each instant of `completions`, until
// `until` or the Dead verdict. Returns when it was dead, if it was.
struct ProbeRun {
  std::optional<Nanos> dead_at;
  std::uint32_t probes = 0;
  Nanos max_pto{0};
  RailVerdict last = RailVerdict::Alive;
};

ProbeRun drive(RailLiveness& d, const std::function<std::optional<Nanos>(std::uint32_t)>& rtt, Nanos until,
               std::vector<Nanos> completions = {}) {
  ProbeRun r;
  d.watch(Nanos{0});
  std::multimap<Nanos, std::uint64_t> answers;  // instant -> nonce
  std::size_t next_completion = 0;
  Nanos check = d.next_check();
  for (;;) {
    Nanos now = check;
    if (!answers.empty() && answers.begin()->first < now) now = answers.begin()->first;
    if (next_completion < completions.size() && completions[next_completion] < now) now = completions[next_completion];
    if (now > until) break;
    if (next_completion < completions.size() && completions[next_completion] == now) {
      d.handle_data_completion(now);
      ++next_completion;
    } else if (!answers.empty() && answers.begin()->first == now) {
      r.last = d.handle_answer(now, answers.begin()->second);
      answers.erase(answers.begin());
    } else {
      const auto c = d.on_check(now);
      if (c.dead) {
        r.dead_at = now;
        return r;
      }
      if (c.probe) {
        if (const auto t = rtt(r.probes)) answers.emplace(now + *t, *c.probe);
        ++r.probes;
      }
    }
    r.max_pto = std::max(r.max_pto, d.pto());
    check = d.next_check();
    REQUIRE(check > now - Nanos{1});
  }
  return r;
}

HaTunables liveness_defaults() { return HaTunables{}; }

}  // namespace

TEST_CASE("a silent rail is dead after misses plus one probe timeouts", "[failover][liveness]") {
  RailLiveness d(liveness_defaults());
  const auto r = drive(
      d, [](std::uint32_t) { return std::nullopt; }, sec(1));
  REQUIRE(r.dead_at);
  // floor 5 ms, 3 misses: a probe at 5 ms, misses at 10, 15 and 20 ms.
  CHECK(*r.dead_at == ms(20));
  CHECK(r.probes == 3);
  CHECK(d.verdict() == RailVerdict::Dead);
}

TEST_CASE("data completions are liveness: no probe while traffic flows", "[failover][liveness]") {
  RailLiveness d(liveness_defaults());
  std::vector<Nanos> completions;
  for (int i = 1; i <= 100; ++i) completions.push_back(ms(i));  // one per millisecond for 100 ms
  const auto r = drive(
      d, [](std::uint32_t) { return std::nullopt; }, ms(300), completions);
  REQUIRE(r.dead_at);
  CHECK(r.probes == 3);
  CHECK(*r.dead_at == ms(100) + ms(20));  // the silence starts at the last completion
}

TEST_CASE("a rail that answers quickly is never dead", "[failover][liveness]") {
  RailLiveness d(liveness_defaults());
  const auto r = drive(
      d, [](std::uint32_t) { return us(4); }, sec(2));
  CHECK_FALSE(r.dead_at);
  CHECK(r.probes > 300);
  CHECK(d.pto() == ms(5));  // microsecond round trips: the floor
  CHECK(r.last == RailVerdict::Alive);
}

TEST_CASE("late answers keep a congested rail alive and the probe timeout grows with them", "[failover][liveness]") {
  RailLiveness d(liveness_defaults());
  // Queues build up: each answer takes 25 % longer than the one before, from 1 ms to ~150 ms,
  // far beyond the 20 ms a silent rail gets.
  const auto grow = [](std::uint32_t n) -> std::optional<Nanos> {
    double t = 1e6;
    for (std::uint32_t i = 0; i < n && t < 150e6; ++i) t *= 1.25;
    return Nanos{static_cast<std::int64_t>(t)};
  };
  const auto r = drive(d, grow, sec(10));
  CHECK_FALSE(r.dead_at);
  CHECK(r.max_pto > ms(150));
  CHECK(d.verdict() == RailVerdict::Congested);
}

TEST_CASE("without its RTT adaptation the detector calls a congested rail dead", "[failover][liveness]") {
  RailLiveness d(liveness_defaults());
  d.drop_rtt_adaptation();
  const auto grow = [](std::uint32_t n) -> std::optional<Nanos> {
    double t = 1e6;
    for (std::uint32_t i = 0; i < n && t < 150e6; ++i) t *= 1.25;
    return Nanos{static_cast<std::int64_t>(t)};
  };
  const auto r = drive(d, grow, sec(10));
  CHECK(r.dead_at);
  CHECK(r.max_pto == ms(5));
}

TEST_CASE("one lost probe is no verdict", "[failover][liveness]") {
  RailLiveness d(liveness_defaults());
  const auto r = drive(
      d,
      [](std::uint32_t n) -> std::optional<Nanos> {
        if (n % 3 == 1) return std::nullopt;  // every third probe lost
        return us(10);
      },
      sec(2));
  CHECK_FALSE(r.dead_at);
}

TEST_CASE("a disabled detector never probes", "[failover][liveness]") {
  HaTunables t;
  t.liveness = false;
  RailLiveness d(t);
  const auto c = d.on_check(sec(1));
  CHECK_FALSE(c.probe);
  CHECK_FALSE(c.dead);
}

TEST_CASE("a liveness timeout range whose max is below its floor is refused", "[failover][liveness][tunables]") {
  HaTunables t;
  REQUIRE(set_tunable(t, "liveness_floor_ms", 50).ok());
  REQUIRE(set_tunable(t, "liveness_max_ms", 20).ok());
  const auto ok = validate(t);
  REQUIRE_FALSE(ok.ok());
  CHECK_THAT(ok.error().what, Catch::Contains("liveness_max_ms"));
}
