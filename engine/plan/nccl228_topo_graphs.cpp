// Deriving ncclTopoCompute's ring and tree graphs from INIT facts (nccl228_topo_graphs.hpp).
#include "engine/plan/nccl228_topo_graphs.hpp"

#include <algorithm>
#include <array>

namespace railcheck::plan {
namespace {

constexpr int kRingMaxChannels = 16;  // init.cc: ringGraph->maxChannels = MAXCHANNELS/2

// search.cc sm90SpeedArrayIntra (one node, system->inter == 0).
constexpr std::array<float, 11> kSm90Intra = {60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f,
                                              15.0f, 12.0f, 11.0f, 6.0f,  3.0f};

// search.cc ncclTopoDupChannels.
TopoGraph dup_channels(TopoGraph g, int max_channels) {
  if (g.bw_intra < 25.0f) return g;
  if (g.bw_intra < 50.0f && g.channels > 4) return g;  // ccMin > 80
  const int dup = std::min(g.channels * 2, max_channels);
  const int div = (dup + g.channels - 1) / g.channels;
  g.bw_intra /= static_cast<float>(div);
  g.bw_inter /= static_cast<float>(div);
  g.channels = dup;
  return g;
}

// One node, every GPU on the NVSwitch with kNvlinkLinks links: the first sm90 intra speed, as
// many channels as a GPU's NVLink bandwidth carries (a ring channel takes the speed once out of
// and once into each GPU), then the duplication. A tree channel of two GPUs loads one direction
// only, so the search alternates root and leaf and fits twice the channels, up to the ring's;
// with more GPUs the middle of the chain loads both directions, as a ring does.
TopoFacts nvlink_node(int local_ranks) {
  const float gpu_bw = static_cast<float>(kNvlinkLinks) * kSm90NvlinkLinkBw;
  const float speed = *std::find_if(kSm90Intra.begin(), kSm90Intra.end(), [&](float v) { return v <= gpu_bw; });
  const int fit = std::max(1, std::min(kRingMaxChannels, static_cast<int>(gpu_bw / speed)));
  TopoFacts f;
  f.ring = dup_channels(TopoGraph{kPatternRing, fit, speed, speed}, kRingMaxChannels);
  const int tree_fit = std::min(f.ring.channels, local_ranks == 2 ? 2 * fit : fit);
  f.tree = dup_channels(TopoGraph{kPatternBalancedTree, tree_fit, speed, speed}, f.ring.channels);
  f.nvlink = true;
  return f;
}

// Several nodes, one NIC per node at kNetSpeed: one channel at that speed for both graphs (the
// NIC carries one), no duplication under 25 GB/s; pass 2 raises the tree's bwIntra to the next
// speed (2.4), which only counts up to 2 nodes (tuning.cc takes bwInter beyond). Inside a node
// the ring's bwIntra is the NIC's speed too: the search runs every graph at one speed.
TopoFacts network(int local_ranks, bool p2p_inside) {
  TopoFacts f;
  f.ring = TopoGraph{kPatternRing, 1, kNetSpeed, kNetSpeed};
  f.tree = TopoGraph{local_ranks == 1 ? kPatternTree : kPatternBalancedTree, 1, 2 * kNetSpeed, kNetSpeed};
  f.nvlink = local_ranks > 1 && p2p_inside;
  f.env_ll128_off = true;  // the NIC hangs off the CPU: typeInter PATH_PHB > PATH_PXN
  return f;
}

}  // namespace

TopoFacts derive_topo_facts(const CommShape& s) {
  const auto local = static_cast<int>(s.v228.ranks_per_node(s.nranks));
  const bool p2p = s.v228.intra_link != Nccl228Params::IntraLink::Shm;
  if (s.v228.nodes(s.nranks) > 1) return network(local, p2p);
  if (p2p) return nvlink_node(local);
  // One node over SHM (P2P disabled): the PCI path through the CPU; not recorded, so the network
  // figures stand in (PCI latencies, no LL128).
  TopoFacts f = network(local, false);
  f.env_ll128_off = true;
  return f;
}

int ring_simple_threads(const TopoFacts& f) {
  return f.ring.bw_intra * static_cast<float>(f.ring.channels) <= kPciBw ? 256 : 512;
}

}  // namespace railcheck::plan
