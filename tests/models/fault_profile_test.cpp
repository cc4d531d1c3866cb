#include "models/fault_profile.hpp"

#include <catch2/catch.hpp>

#include "models/nic_preset.hpp"

using namespace railcheck;

TEST_CASE("flaps expand into ordered down/up changes", "[faults]") {
  FaultProfile p;
  p.flaps.push_back(LinkFlap{LinkRef{0, 1}, ms(10), ms(100), ms(30), 2});
  p.downs.push_back(LinkDown{LinkRef{1, 0}, ms(50), std::nullopt});
  const auto ch = expand_link_changes(p);
  REQUIRE(ch.size() == 5);
  CHECK((ch[0].at == ms(10) && !ch[0].up));
  CHECK((ch[1].at == ms(40) && ch[1].up));
  CHECK((ch[2].at == ms(50) && !ch[2].up && ch[2].link == LinkRef{1, 0}));
  CHECK((ch[3].at == ms(110) && !ch[3].up));
  CHECK((ch[4].at == ms(140) && ch[4].up));
  CHECK(first_fault_time(p) == ms(10));
}

TEST_CASE("jitter adds latency only inside its window and on its link", "[faults]") {
  FaultProfile p;
  p.jitters.push_back(LinkJitter{LinkRef{0, 0}, ms(10), ms(20), us(50), us(5)});
  CHECK(extra_latency(p, LinkRef{0, 0}, ms(15)) == us(50));
  CHECK(extra_latency(p, LinkRef{0, 0}, ms(20)) == Nanos{0});
  CHECK(extra_latency(p, LinkRef{0, 1}, ms(15)) == Nanos{0});
  CHECK_FALSE(first_fault_time(p));  // jitter is not an outage
}

TEST_CASE("NIC presets carry the limits the budget needs", "[nic]") {
  const auto cx7 = find_nic_preset("cx7-400g");
  REQUIRE(cx7);
  CHECK(cx7->link_gbps == 400);
  CHECK(cx7->max_qp > 0);
  CHECK(cx7->max_cqe > 0);
  CHECK(cx7->ordered);
  const auto efa = find_nic_preset("efa-100g");
  REQUIRE(efa);
  CHECK_FALSE(efa->ordered);
  CHECK_FALSE(find_nic_preset("nope"));
}
