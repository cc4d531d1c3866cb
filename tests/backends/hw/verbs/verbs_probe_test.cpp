#include "backends/hw/verbs/verbs_probe.hpp"

#include <catch2/catch.hpp>

using namespace railcheck;
using namespace railcheck::hw::verbs;

TEST_CASE("the probe reports real devices or says there is none, it never invents one", "[verbs][probe]") {
  auto devices = probe_verbs();
  if (!devices.ok()) {
    // This is the answer on every machine without an RDMA NIC (CI, the dev boxes).
    CHECK(devices.error().what == kNoDeviceMessage);
    CHECK_THAT(devices.error().hint, Catch::Contains("ibv_get_device_list"));
    return;
  }
  REQUIRE_FALSE(devices->empty());
  for (const auto& d : devices.value()) {
    INFO(d.name);
    CHECK(d.caps.max_qp > 0);
    CHECK(d.caps.max_cqe > 0);
    CHECK(d.caps.max_qp_wr > 0);
    CHECK_FALSE(d.ports.empty());
    auto caps = to_budget_caps(d);
    CHECK(caps.max_qp == d.caps.max_qp);
    CHECK(caps.source == "device " + d.name);
  }
}

TEST_CASE("port speed and MTU decode the verbs encodings", "[verbs][probe]") {
  CHECK(port_gbps(128, 2) == 400);  // NDR 4x
  CHECK(port_gbps(64, 2) == 200);   // HDR 4x
  CHECK(port_gbps(32, 2) == 100);   // EDR 4x
  CHECK(port_gbps(64, 16) == 100);  // HDR 2x
  CHECK(port_gbps(3, 2) == 0);      // not an encoding
  CHECK(mtu_bytes(IBV_MTU_4096) == 4096);
  CHECK(mtu_bytes(IBV_MTU_256) == 256);
}

TEST_CASE("a device's limits become a NIC preset and budget caps", "[verbs][probe]") {
  VerbsDevice d;
  d.name = "mlx5_7";
  d.caps.max_qp = 131072;
  d.caps.max_cqe = 4194303;
  d.caps.max_qp_wr = 32768;
  d.caps.max_cq = 16777216;
  PortInfo p;
  p.active = true;
  p.gbps = 400;
  p.active_mtu = IBV_MTU_4096;
  d.ports.push_back(p);
  auto preset = to_nic_preset(d);
  CHECK(preset.name == "mlx5_7");
  CHECK(preset.max_qp == 131072);
  CHECK(preset.link_gbps == 400);
  CHECK(preset.mtu == 4096);
  auto caps = to_budget_caps(d);
  CHECK(caps.max_cq == 16777216);
  CHECK(caps.max_cqe == 4194303);
}
