#pragma once
// The SimGrid platform for routing-table runs: GPUs in nodes, each GPU with
//   - an RDMA NIC link (all of the GPU's NICs as one link of their summed rate: the transfer
//     library shards every write evenly over them, seed "支持多网卡聚合"),
//   - an NVLink link into its node's switch,
//   - a PCIe link from host memory (for the H2D copy of CPU-offloaded FSDP shards),
//   - a compute host whose speed is HBM bandwidth, so a memory-bound GPU op of B bytes takes
//     B / bandwidth seconds.
// Each kind of link lives in its own star zone, so NIC, NVLink and PCIe traffic never share a
// link; a route is the sender's link up and the receiver's link down.
#include <cstdint>
#include <memory>
#include <simgrid/s4u.hpp>
#include <vector>

#include "engine/core/time.hpp"

namespace railcheck::sim {

struct FabricParams {
  double nic_gbps_per_gpu = 400;  // Gb/s, all of a GPU's NICs together
  Nanos nic_latency = us(2);      // one hop NIC -> switch
  double nvlink_gbytes_s = 450;   // GB/s per direction per GPU (H100/H200 NVLink 4)
  Nanos nvlink_latency = us(1);
  double pcie_gbytes_s = 50;   // GB/s host -> GPU (PCIe Gen5 x16 in practice)
  double hbm_gbytes_s = 2000;  // GB/s a memory-bound kernel reaches (H100 peak 3350)
  std::uint32_t gpus_per_node = 8;
};

// SimGrid's `network/optim`: how its max-min sharing is brought up to date at an event. Lazy
// (SimGrid's default) re-solves only the constraints it marks as modified; SimGrid 3.32 marks a
// flow's links from its first link only, and can then over-fill a link
// (simgrid_lazy_sharing_test.cpp). Full re-solves every constraint at every event: slower, and
// within bandwidth (docs/routing.md, "A fluid solver with SimGrid's arithmetic").
enum class NetworkOptim : std::uint8_t { Lazy, Full };

// A fresh s4u::Engine configured for an RDMA fabric (CM02, no cross traffic, small actor
// stacks) whose network model uses `optim`: Lazy for the weight transfer and every other
// command, Full for `route moe --simgrid`. SimGrid's configuration is process-global, so only
// an engine that finds it unset sets the rest; sim_run.cpp sets the same values when it runs
// first. `optim` is set for each engine, before its platform exists.
std::unique_ptr<simgrid::s4u::Engine> make_routing_engine(NetworkOptim optim = NetworkOptim::Lazy);

// Sets `network/optim` for the next network model SimGrid builds, when an engine creates its
// platform's root zone; a model already built keeps the mode it read. SimGrid refuses the change
// once any platform of the process exists (a guard for the model already built), so this lifts
// the guard for this one setting (gpu_fabric.cpp).
void set_network_optim(NetworkOptim optim);

class GpuFabric {
 public:
  // `gpus` GPUs, node n holding GPUs [n * gpus_per_node, (n + 1) * gpus_per_node). Builds into
  // the current engine.
  GpuFabric(std::uint32_t gpus, const FabricParams& p);

  simgrid::s4u::Host* compute(std::uint32_t gpu) const { return hosts_[gpu].compute; }
  simgrid::s4u::Host* nic(std::uint32_t gpu) const { return hosts_[gpu].nic; }
  simgrid::s4u::Host* nvlink(std::uint32_t gpu) const { return hosts_[gpu].nvlink; }
  simgrid::s4u::Host* host_memory(std::uint32_t gpu) const { return hosts_[gpu].cpu; }
  // The host pair a GPU-to-GPU copy uses: NVLink inside a node, the NICs between nodes.
  std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*> route(std::uint32_t from, std::uint32_t to) const;
  bool same_node(std::uint32_t a, std::uint32_t b) const { return a / per_node_ == b / per_node_; }
  double nic_bytes_per_s() const { return nic_bytes_per_s_; }

 private:
  struct GpuHosts {
    simgrid::s4u::Host* compute;
    simgrid::s4u::Host* nic;
    simgrid::s4u::Host* nvlink;
    simgrid::s4u::Host* cpu;
  };
  std::uint32_t per_node_;
  double nic_bytes_per_s_;
  std::vector<GpuHosts> hosts_;
};

}  // namespace railcheck::sim
