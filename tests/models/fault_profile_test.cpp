#include "models/fault_profile.hpp"

#include <catch2/catch.hpp>

using namespace railcheck;

namespace {
constexpr LinkRef kA{0, 0};
constexpr LinkRef kB{1, 1};
}  // namespace

TEST_CASE("a link_down is one down change, or down then up when it has an end", "[faults]") {
  FaultProfile p;
  p.downs.push_back(LinkDown{kA, ms(20), std::nullopt});
  p.downs.push_back(LinkDown{kB, ms(30), ms(70)});
  const auto ch = expand_link_changes(p);
  REQUIRE(ch.size() == 3);
  CHECK((ch[0].at == ms(20) && ch[0].link == kA && !ch[0].up));
  CHECK((ch[1].at == ms(30) && ch[1].link == kB && !ch[1].up));
  CHECK((ch[2].at == ms(70) && ch[2].link == kB && ch[2].up));
}

TEST_CASE("flaps expand into count down/up cycles, merged in time order with other faults", "[faults]") {
  FaultProfile p;
  p.flaps.push_back(LinkFlap{kB, ms(10), ms(100), ms(30), 2});
  p.downs.push_back(LinkDown{kA, ms(50), std::nullopt});
  const auto ch = expand_link_changes(p);
  REQUIRE(ch.size() == 5);
  CHECK((ch[0].at == ms(10) && ch[0].link == kB && !ch[0].up));
  CHECK((ch[1].at == ms(40) && ch[1].link == kB && ch[1].up));
  CHECK((ch[2].at == ms(50) && ch[2].link == kA && !ch[2].up));
  CHECK((ch[3].at == ms(110) && ch[3].link == kB && !ch[3].up));
  CHECK((ch[4].at == ms(140) && ch[4].link == kB && ch[4].up));
}

TEST_CASE("changes at the same instant keep the order the profile lists them", "[faults]") {
  // The outage ends at 50 ms exactly when the flap takes the link down again: every driver must
  // apply "up" then "down" and end with the link down.
  FaultProfile p;
  p.downs.push_back(LinkDown{kA, ms(20), ms(50)});
  p.flaps.push_back(LinkFlap{kA, ms(50), ms(100), ms(10), 1});
  const auto ch = expand_link_changes(p);
  REQUIRE(ch.size() == 4);
  CHECK((ch[1].at == ms(50) && ch[1].up));
  CHECK((ch[2].at == ms(50) && !ch[2].up));
  CHECK((ch[3].at == ms(60) && ch[3].up));
}

TEST_CASE("jitter is not a link change", "[faults]") {
  FaultProfile p;
  p.jitters.push_back(LinkJitter{kA, ms(10), ms(20), us(50), us(5)});
  CHECK_FALSE(p.empty());
  CHECK(expand_link_changes(p).empty());
}

TEST_CASE("jitter adds latency only inside its half-open window and on its own link", "[faults]") {
  FaultProfile p;
  p.jitters.push_back(LinkJitter{kA, ms(10), ms(20), us(50), us(5)});
  CHECK(extra_latency(p, kA, ms(9)) == Nanos{0});
  CHECK(extra_latency(p, kA, ms(10)) == us(50));  // the spread is the driver's to draw, not added here
  CHECK(extra_latency(p, kA, ms(15)) == us(50));
  CHECK(extra_latency(p, kA, ms(20)) == Nanos{0});
  CHECK(extra_latency(p, kB, ms(15)) == Nanos{0});
}

TEST_CASE("overlapping jitter windows on one link add up", "[faults]") {
  FaultProfile p;
  p.jitters.push_back(LinkJitter{kA, ms(10), ms(30), us(50), Nanos{0}});
  p.jitters.push_back(LinkJitter{kA, ms(20), ms(40), us(7), Nanos{0}});
  CHECK(extra_latency(p, kA, ms(15)) == us(50));
  CHECK(extra_latency(p, kA, ms(25)) == us(57));
  CHECK(extra_latency(p, kA, ms(35)) == us(7));
}

TEST_CASE("first_fault_time is the earliest outage of any kind, and jitter is not one", "[faults]") {
  FaultProfile p;
  CHECK_FALSE(first_fault_time(p));
  p.jitters.push_back(LinkJitter{kA, ms(1), ms(2), us(50), Nanos{0}});
  CHECK_FALSE(first_fault_time(p));
  p.downs.push_back(LinkDown{kA, ms(50), std::nullopt});
  CHECK(first_fault_time(p) == ms(50));
  p.flaps.push_back(LinkFlap{kB, ms(30), ms(100), ms(10), 3});
  CHECK(first_fault_time(p) == ms(30));
  p.downs.push_back(LinkDown{kB, ms(5), ms(6)});
  CHECK(first_fault_time(p) == ms(5));
}
