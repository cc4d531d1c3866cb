#include "backends/sim/routing/gpu_fabric.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <string>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

// A link far faster than anything else on its route, for the side of a star route that is not
// the bottleneck (the GPU end of the PCIe star).
constexpr double kUnbounded = 1e15;

#ifdef RAILCHECK_SANITIZE
constexpr int kActorStackKiB = 256;  // ASan's instrumented frames are several times larger
#else
constexpr int kActorStackKiB = 64;
#endif

sg4::Link* attach(sg4::NetZone* zone, sg4::Host* host, const std::string& name, double bytes_per_s, Nanos latency) {
  auto* link = zone->create_split_duplex_link(name, bytes_per_s)->set_latency(to_seconds(latency));
  zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
  return link;
}

}  // namespace

// SimGrid 3.32's stage of configuration (src/simgrid/sg_config.cpp): 2 once a platform's root
// zone exists, after which the callback of every model option, network/optim included, aborts
// with "Cannot change the model after the initialization". It is never lowered when an engine
// ends, so a process could never run a second engine with another optimisation mode, though
// the next engine builds a network model of its own and reads the option then. Exported by
// libsimgrid (C linkage), not declared in its public headers.
extern "C" int _sg_cfg_init_status;

void set_network_optim(NetworkOptim optim) {
  const std::string want = optim == NetworkOptim::Full ? "Full" : "Lazy";
  if (simgrid::config::get_value<std::string>("network/optim") == want) return;
  const int stage = _sg_cfg_init_status;
  _sg_cfg_init_status = 1;  // configured, no platform: the stage at which SimGrid accepts it
  sg4::Engine::set_config("network/optim:" + want);
  _sg_cfg_init_status = stage;
}

std::unique_ptr<sg4::Engine> make_routing_engine(NetworkOptim optim) {
  char name[] = "railcheck-route";
  char* argv[] = {name, nullptr};
  int argc = 1;
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  xbt_log_control_set("root.thresh:critical");
  // SimGrid's configuration is process-global and models cannot change once an engine has run,
  // so only the first engine of the process sets it; a default network model means nobody has
  // (sim_run.cpp sets the same values when it comes first).
  if (simgrid::config::is_default("network/model")) {
    // RDMA fabric: no TCP correction factors, no ACK cross traffic.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic", false);
    // Small unguarded stacks: the sendto driver runs one short-lived writer actor per task.
    sg4::Engine::set_config("contexts/guard-size", 0);
    sg4::Engine::set_config("contexts/stack-size", kActorStackKiB);
  }
  set_network_optim(optim);
  return engine;
}

GpuFabric::GpuFabric(std::uint32_t gpus, const FabricParams& p)
    : per_node_(p.gpus_per_node), nic_bytes_per_s_(p.nic_gbps_per_gpu * 1e9 / 8.0), hosts_(gpus) {
  auto* root = sg4::create_full_zone("cluster");
  auto* rdma = sg4::create_star_zone("rdma");
  auto* pcie = sg4::create_star_zone("pcie");
  rdma->set_parent(root);
  pcie->set_parent(root);
  std::vector<sg4::NetZone*> nodes;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    const std::uint32_t node = g / per_node_;
    if (node == nodes.size()) {
      nodes.push_back(sg4::create_star_zone(fmt::format("node{}-nvlink", node)));
      nodes.back()->set_parent(root);
    }
    GpuHosts& h = hosts_[g];
    h.nic = rdma->create_host(fmt::format("gpu{}-nic", g), 1e9);
    attach(rdma, h.nic, fmt::format("gpu{}-nic-link", g), nic_bytes_per_s_, p.nic_latency);
    h.nvlink = nodes.back()->create_host(fmt::format("gpu{}-nvl", g), 1e9);
    attach(nodes.back(), h.nvlink, fmt::format("gpu{}-nvlink", g), p.nvlink_gbytes_s * 1e9, p.nvlink_latency);
    h.cpu = pcie->create_host(fmt::format("gpu{}-cpu", g), 1e9);
    attach(pcie, h.cpu, fmt::format("gpu{}-pcie", g), p.pcie_gbytes_s * 1e9, us(1));
    h.compute = pcie->create_host(fmt::format("gpu{}", g), p.hbm_gbytes_s * 1e9);
    attach(pcie, h.compute, fmt::format("gpu{}-pcie-end", g), kUnbounded, Nanos{0});
  }
  for (auto* z : nodes) z->seal();
  rdma->seal();
  pcie->seal();
  root->seal();
}

std::pair<sg4::Host*, sg4::Host*> GpuFabric::route(std::uint32_t from, std::uint32_t to) const {
  if (same_node(from, to)) return {hosts_[from].nvlink, hosts_[to].nvlink};
  return {hosts_[from].nic, hosts_[to].nic};
}

}  // namespace railcheck::sim
