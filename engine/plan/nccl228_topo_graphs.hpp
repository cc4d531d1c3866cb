#pragma once
// The ring and tree graphs NCCL 2.28.9's topology search (src/graph/search.cc ncclTopoCompute)
// finds, derived from what a log's INIT lines say about the communicator: nodes, ranks per node
// and how ranks of one node are connected (P2P or SHM). The GRAPH lines that print the graphs
// ("Pattern 4, crossNic 0, nChannels 12, bw 30.000000/30.000000, ...") are not an input: users'
// logs rarely carry them; tests/engine/plan hold this derivation against the recordings' lines.
//
// The search, for the topologies derived here (Hopper, compCap 90):
//   - speeds come from sm90SpeedArrayIntra (one node) or sm90SpeedArrayInter (a network), from
//     the first one not above the system's maxBw; as many channels as the links carry at it
//   - ncclTopoDupChannels doubles channels of 25 GB/s and more (halving their bandwidth) unless
//     they are under 50 GB/s and more than 4 already; the tree graph may have no more channels
//     than the ring (init.cc: treeGraph->maxChannels = ringGraph->nChannels)
//   - pass 2 raises a tree's bwIntra one speed step while it stays under twice bwInter
//   - one GPU per node forces the tree pattern NCCL_TOPO_PATTERN_TREE; more keep the balanced tree
//
// What the log cannot say is a named default tied to the hardware: the NVLink bandwidth of an
// H100/H200 SXM (kNvlinkLinks x kSm90NvlinkLinkBw) and the network's per-NIC speed (kNetSpeed,
// NET/Socket as recorded).
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/nccl228_tune_model.hpp"

namespace railcheck::plan {

constexpr int kNvlinkLinks = 18;            // H100/H200 SXM: NV18 (nvidia-smi topo -m)
constexpr float kSm90NvlinkLinkBw = 20.6f;  // SM90_NVLINK_BW (src/graph/topo.h), GB/s per link
constexpr float kNetSpeed = 1.2f;           // NET/Socket's speed as ncclTopoCompute rounds it (recorded)
constexpr float kPciBw = 12.0f;             // PCI_BW (2.28.9 src/graph/topo.h: "PCI Gen3 x16")

// The facts ncclTopoTuneModel reads, for `shape` (nranks, v228.nnodes, local_ranks, intra_link).
TopoFacts derive_topo_facts(const CommShape& shape);

// comm->maxThreads[RING][SIMPLE] (tuning.cc ncclTopoTuneModel): 256 where the ring graph carries
// no more than PCI_BW in all, else NCCL_SIMPLE_MAX_NTHREADS (512).
int ring_simple_threads(const TopoFacts& facts);

}  // namespace railcheck::plan
