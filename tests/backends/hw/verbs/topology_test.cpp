#include <catch2/catch.hpp>

#include "backends/hw/verbs/apm_check.hpp"
#include "backends/hw/verbs/gid_choice.hpp"
#include "backends/hw/verbs/pci_topology.hpp"

using namespace railcheck;
using namespace railcheck::hw::verbs;

namespace {
const std::filesystem::path kTree = std::filesystem::path(RAILCHECK_SOURCE_DIR) / "tests/data/verbs/sysfs-2gpu-4nic";

const PciFunction& find(const std::vector<PciFunction>& v, const std::string& name) {
  for (const auto& f : v)
    if (f.name == name) return f;
  FAIL("no " << name);
  return v.front();
}
}  // namespace

TEST_CASE("the captured sysfs tree yields two GPUs and four NICs with their PCI chains", "[verbs][topology]") {
  auto t = read_pci_topology(kTree);
  REQUIRE(t.ok());
  REQUIRE(t->gpus.size() == 2);
  REQUIRE(t->nics.size() == 4);
  CHECK(t->gpus[0].bdf == "0000:03:00.0");
  CHECK(t->gpus[1].numa_node == 1);
  const auto& nic = find(t->nics, "mlx5_0");
  CHECK(nic.bdf == "0000:04:00.0");
  CHECK(nic.chain == std::vector<std::string>{"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0"});
  CHECK(nic.sysfs_path == "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0");
  CHECK(nic.vendor == 0x15b3);
}

TEST_CASE("PCI distance classes follow nvidia-smi topo", "[verbs][topology]") {
  auto t = read_pci_topology(kTree);
  REQUIRE(t.ok());
  const auto& gpu0 = t->gpus[0];
  CHECK(pci_distance(gpu0, find(t->nics, "mlx5_0")).cls == PciDistance::Pxb);  // through the switch
  CHECK(pci_distance(gpu0, find(t->nics, "mlx5_1")).cls == PciDistance::Phb);  // other root port
  CHECK(pci_distance(gpu0, find(t->nics, "mlx5_2")).cls == PciDistance::Sys);  // other socket
  PciFunction a{.chain = {"pci0000:00", "0000:00:01.0", "0000:01:00.0"}};
  PciFunction b{.chain = {"pci0000:00", "0000:00:01.0", "0000:01:00.1"}};
  CHECK(pci_distance(a, b).cls == PciDistance::Pix);  // siblings under one bridge
  PciFunction c{.chain = {"pci0000:40"}, .numa_node = 0};
  PciFunction d{.chain = {"pci0000:00"}, .numa_node = 0};
  CHECK(pci_distance(c, d).cls == PciDistance::Node);
}

TEST_CASE("each GPU gets its nearest NIC as primary and a standby outside the primary's switch", "[verbs][topology]") {
  auto t = read_pci_topology(kTree);
  REQUIRE(t.ok());
  auto choice = choose_nics(t.value());
  REQUIRE(choice.size() == 2);
  CHECK(choice[0].primary == "mlx5_0");
  CHECK(choice[0].standby == "mlx5_1");
  CHECK(choice[0].standby_hops.cls == PciDistance::Phb);
  CHECK_FALSE(choice[0].standby_shares_switch);
  CHECK(choice[1].primary == "mlx5_2");
  CHECK(choice[1].standby == "mlx5_3");
}

TEST_CASE("with two NICs behind one switch the standby shares it and says so", "[verbs][topology]") {
  PciTopology t;
  t.gpus.push_back(PciFunction{.kind = PciKind::Gpu, .name = "g", .bdf = "g", .chain = {"pci0000:00", "b", "s", "d1", "g"}});
  t.nics.push_back(PciFunction{.name = "n0", .chain = {"pci0000:00", "b", "s", "d1", "n0"}});
  t.nics.push_back(PciFunction{.name = "n1", .chain = {"pci0000:00", "b", "s", "d2", "n1"}});
  auto c = choose_nics(t);
  REQUIRE(c.size() == 1);
  CHECK(c[0].primary == "n0");
  CHECK(c[0].standby == "n1");
  CHECK(c[0].standby_shares_switch);
}

TEST_CASE("a host without the infiniband class folder has no NICs and no choice", "[verbs][topology]") {
  auto tmp = std::filesystem::temp_directory_path() / ("railcheck-empty-sysfs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp / "sys/devices");
  auto t = read_pci_topology(tmp);
  std::filesystem::remove_all(tmp);
  REQUIRE(t.ok());
  CHECK(t->nics.empty());
  CHECK(choose_nics(t.value()).empty());
}

TEST_CASE("RoCE prefers a v2 IPv4-mapped GID, IB takes index 0", "[verbs][gid]") {
  Gid link_local{};
  link_local[0] = 0xfe;
  link_local[1] = 0x80;
  link_local[15] = 1;
  Gid v4{};
  v4[10] = v4[11] = 0xff;
  v4[12] = 169;
  v4[13] = 254;
  v4[15] = 2;
  std::vector<GidEntry> table{{0, link_local, GidType::RoceV1}, {1, link_local, GidType::RoceV2}, {2, v4, GidType::RoceV1},
                              {3, v4, GidType::RoceV2}, {4, Gid{}, GidType::RoceV2}};
  auto roce = choose_gid(table, true);
  REQUIRE(roce);
  CHECK(roce->index == 3);
  CHECK(is_ipv4_mapped(roce->gid));
  CHECK(format_gid(roce->gid) == "0000:0000:0000:0000:0000:ffff:a9fe:0002");
  std::vector<GidEntry> only_link_local{{0, link_local, GidType::RoceV1}};
  CHECK_FALSE(choose_gid(only_link_local, true));
  std::vector<GidEntry> ib{{1, v4, GidType::Ib}, {0, link_local, GidType::Ib}};
  auto i = choose_gid(ib, false);
  REQUIRE(i);
  CHECK(i->index == 0);
}

TEST_CASE("the APM check warns on the seed's switch, notes capable ports, and is quiet without a standby", "[verbs][apm]") {
  auto on = apm_warning(kTree, "mlx5_3", 1, false, true);
  REQUIRE(on);
  CHECK_THAT(*on, Catch::Contains("APM is enabled") && Catch::Contains("HA_NCCL_ENABLE_BACKUP=0"));
  CHECK_FALSE(apm_warning(kTree, "mlx5_3", 1, false, false));
  CHECK_FALSE(apm_warning(kTree, "mlx5_0", 1, false, true));
  auto capable = apm_warning(kTree, "mlx5_0", 1, true, true);
  REQUIRE(capable);
  CHECK_THAT(*capable, Catch::Contains("never load an alternate path"));
}
