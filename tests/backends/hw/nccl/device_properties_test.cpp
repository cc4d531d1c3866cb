#include "backends/hw/nccl/device_properties.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "backends/hw/nccl/net_abi.hpp"

using namespace railcheck;
using namespace railcheck::nccl;

namespace {
ProviderFacts software_provider() {
  ProviderFacts f;
  f.provider = "tcp;ofi_rxm";
  f.domain = "lo";
  f.caps = budget::BudgetCaps{
      .max_qp = 32768, .max_cqe = 4294967295, .max_qp_wr = 2048, .max_cq = 65536, .source = "provider tcp;ofi_rxm"};
  return f;
}
}  // namespace

TEST_CASE("each rail group is its own device with host pointers only", "[nccl][properties]") {
  PluginConfig c;
  c.rail_groups = 2;
  auto p0 = device_properties(c, software_provider(), 0);
  auto p1 = device_properties(c, software_provider(), 1);
  REQUIRE(p0.ok());
  REQUIRE(p1.ok());
  CHECK(p0->name == "railcheck0");
  CHECK(p1->name == "railcheck1");
  CHECK(p0->guid != p1->guid);
  CHECK(p0->ptr_support == nccl_abi::kPtrHost);
  CHECK_FALSE(p0->pci_path.has_value());
  CHECK(p0->speed_mbps == 10000);
  CHECK_THAT(p0->speed_source, Catch::Contains("fallback"));
  auto missing = device_properties(c, software_provider(), 2);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message(), Catch::Contains("HA_NCCL_RAIL_GROUPS"));
}

TEST_CASE("maxComms and maxRecvs come from the budget over the provider's limits", "[nccl][properties]") {
  PluginConfig c;
  auto p = device_properties(c, software_provider(), 0);
  REQUIRE(p.ok());
  // The software provider's limits leave room for more than the seed's cap of 256.
  CHECK(p->max_comms == 256);
  CHECK(p->budget.binding == budget::BudgetResource::Cap);
  CHECK(p->max_recvs == 8);

  // A tight provider binds on endpoints: 2 comms x 16 channels x 2 paths x 1 QP = 64 per connection.
  ProviderFacts tight = software_provider();
  tight.caps.max_qp = 640;
  c.engine.max_recvs = 4;
  auto q = device_properties(c, tight, 0);
  REQUIRE(q.ok());
  CHECK(q->max_comms == 10);
  CHECK(q->budget.binding == budget::BudgetResource::Qp);
  CHECK(q->max_recvs == 4);
}

TEST_CASE("a NIC preset replaces the provider's limits and a link speed wins over the fallback", "[nccl][properties]") {
  PluginConfig c;
  c.nic_preset = "cx7-400g";
  ProviderFacts f = software_provider();
  f.link_mbps = 100000;
  auto p = device_properties(c, f, 0);
  REQUIRE(p.ok());
  CHECK(p->speed_mbps == 100000);
  CHECK(p->speed_source == "link");
  CHECK_THAT(p->limits_source, Catch::Contains("cx7-400g"));
  c.speed_mbps = 400000;
  CHECK(device_properties(c, f, 0)->speed_mbps == 400000);
}

TEST_CASE("sysfs speed and PCI path come from a captured tree", "[nccl][properties]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("railcheck-sysfs-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "devices/pci0000:00/0000:00:05.0");
  fs::create_directories(root / "class/net/eth7");
  fs::create_directories(root / "class/net/lo");
  std::ofstream(root / "class/net/eth7/speed") << "25000\n";
  std::ofstream(root / "class/net/lo/speed") << "-1\n";
  fs::create_directory_symlink(root / "devices/pci0000:00/0000:00:05.0", root / "class/net/eth7/device");
  CHECK(sysfs_link_mbps(root.string(), "eth7") == 25000);
  CHECK_FALSE(sysfs_link_mbps(root.string(), "lo").has_value());
  CHECK_FALSE(sysfs_link_mbps(root.string(), "").has_value());
  auto pci = sysfs_pci_path(root.string(), "eth7");
  REQUIRE(pci.has_value());
  CHECK_THAT(*pci, Catch::EndsWith("/pci0000:00/0000:00:05.0"));
  CHECK_FALSE(sysfs_pci_path(root.string(), "lo").has_value());
  fs::remove_all(root);
}

TEST_CASE("the installed tcp provider is found and a missing one is a clear error", "[nccl][properties]") {
  auto tcp = query_provider("tcp;ofi_rxm", "127.0.0.1");
  if (!tcp.ok()) {
    WARN("tcp;ofi_rxm not available here: " << tcp.error().message());
  } else {
    CHECK(tcp->interface == "lo");
    CHECK(tcp->caps.max_qp > 0);
    CHECK(tcp->caps.max_qp_wr > 0);
  }
  auto none = query_provider("no-such-provider", "");
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().message(), Catch::Contains("'no-such-provider' not available here"));
}
