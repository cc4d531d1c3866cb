#pragma once
// GPUs and RDMA NICs from sysfs, and which NIC each GPU uses as its primary and its standby
// (seed §3.1: "parse /sys/class/infiniband/*/device and /sys/bus/pci/devices to build a PCI
// affinity list for choosing the standby"). Distances use nvidia-smi topo's classes, the ones
// NCCL's topology code reasons with:
//   PIX  at most one PCIe bridge between the two      PHB  through the host bridge (root complex)
//   PXB  several bridges, not the host bridge         NODE two root complexes of one NUMA node
//   SYS  across NUMA nodes (the SMP interconnect)
// The sysfs root is a parameter: tests read a captured tree (tests/data/verbs/).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::hw::verbs {

enum class PciKind : std::uint8_t { Gpu, Nic };

struct PciFunction {
  PciKind kind = PciKind::Nic;
  std::string name;                 // "mlx5_0" for a NIC, the BDF for a GPU
  std::string bdf;                  // "0000:03:00.0"
  std::vector<std::string> chain;   // from the root complex ("pci0000:00") down to the device itself
  std::string sysfs_path;           // "/sys/devices/pci0000:00/.../0000:03:00.0" (NCCL's pciPath)
  int numa_node = -1;               // -1: the kernel does not know
  std::uint16_t vendor = 0;
  std::uint32_t pci_class = 0;
};

enum class PciDistance : std::uint8_t { Pix, Pxb, Phb, Node, Sys };
std::string_view to_string(PciDistance d);

struct PciHops {
  PciDistance cls = PciDistance::Sys;
  std::uint32_t bridges = 0;  // bridges crossed below a shared root complex; 0 otherwise
  bool operator<(const PciHops& o) const { return cls != o.cls ? cls < o.cls : bridges < o.bridges; }
};
PciHops pci_distance(const PciFunction& a, const PciFunction& b);

struct PciTopology {
  std::vector<PciFunction> gpus;  // NVIDIA 3D/VGA controllers, in BDF order
  std::vector<PciFunction> nics;  // every /sys/class/infiniband device, in name order
};

// Reads <sysfs_root>/sys/class/infiniband and <sysfs_root>/sys/bus/pci/devices. A missing
// infiniband class folder means no RDMA driver is loaded: an empty NIC list, not an error.
Result<PciTopology> read_pci_topology(const std::filesystem::path& sysfs_root = "/");

struct NicChoice {
  std::string gpu;  // GPU BDF
  std::string primary;
  PciHops primary_hops;
  std::optional<std::string> standby;  // none when the host has one NIC
  PciHops standby_hops;
  bool standby_shares_switch = false;  // no NIC outside the primary's PCIe switch was left
};

// Primary: the NIC nearest the GPU. Standby: the nearest of the others that does not sit behind
// the primary's PCIe switch (a switch or its uplink failing takes both down), else the nearest.
std::vector<NicChoice> choose_nics(const PciTopology& topo);

}  // namespace railcheck::hw::verbs
