#include "models/nic_preset.hpp"

#include <catch2/catch.hpp>
#include <set>

using namespace railcheck;

TEST_CASE("presets are found by name, and an unknown name finds nothing", "[nic]") {
  for (const char* name : {"cx7-400g", "efa-100g", "efa-200g", "test-10g"}) {
    INFO(name);
    const auto p = find_nic_preset(name);
    REQUIRE(p);
    CHECK(p->name == name);
  }
  CHECK_FALSE(find_nic_preset("nope"));
  CHECK_FALSE(find_nic_preset(""));
}

TEST_CASE("every preset has a unique name and every limit the budget needs", "[nic]") {
  std::set<std::string> names;
  for (const NicPreset& p : nic_presets()) {
    INFO(p.name);
    CHECK(names.insert(p.name).second);
    CHECK_FALSE(p.description.empty());
    CHECK(p.link_gbps > 0);
    CHECK(p.link_latency > Nanos{0});
    CHECK(p.mtu >= 256);
    CHECK(p.max_qp > 0);
    CHECK(p.max_cqe > 0);
    CHECK(p.max_qp_wr > 0);
    CHECK(p.max_sge > 0);
  }
}

TEST_CASE("cx7-400g carries ConnectX-7's verbs limits and is RC-ordered", "[nic]") {
  const auto p = find_nic_preset("cx7-400g");
  REQUIRE(p);
  CHECK(p->link_gbps == 400);
  CHECK(p->link_latency == us(1));
  CHECK(p->mtu == 4096);
  CHECK(p->max_qp == 131072);
  CHECK(p->max_cqe == 4194303);
  CHECK(p->max_qp_wr == 32768);
  CHECK(p->max_sge == 30);
  CHECK(p->ordered);
}

TEST_CASE("EFA presets are SRD: reliable but unordered, with an MTU of about 8 KiB", "[nic]") {
  for (const char* name : {"efa-100g", "efa-200g"}) {
    INFO(name);
    const auto p = find_nic_preset(name);
    REQUIRE(p);
    CHECK_FALSE(p->ordered);
    CHECK(p->mtu > 8192);
    CHECK(p->mtu < 9216);
    // EFA queues are far shallower than mlx5's: budgets that fit CX-7 may not fit EFA.
    CHECK(p->max_qp_wr < find_nic_preset("cx7-400g")->max_qp_wr);
  }
  CHECK(find_nic_preset("efa-100g")->link_gbps == 100);
  CHECK(find_nic_preset("efa-200g")->link_gbps == 200);
}

TEST_CASE("test-10g is a slow NIC with small limits for fast tests", "[nic]") {
  const auto p = find_nic_preset("test-10g");
  REQUIRE(p);
  CHECK(p->link_gbps == 10);
  CHECK(p->max_qp <= 64);
  CHECK(p->max_qp_wr <= 256);
  CHECK(p->ordered);
}
