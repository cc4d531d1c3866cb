#pragma once
// NCCL 2.28.9's latency and bandwidth tables computed from the topology (src/graph/tuning.cc
// ncclTopoTuneModel), for communicators whose log did not print them (TUNING not among the
// subsystems) or that come from a trace or scenario. Ring, Tree and PAT only: CollNet needs
// config.collnetEnable and NVLS an NVLS graph, neither of which the model knows, so both stay
// at bandwidth 0 (disabled), as on the recorded H100s.
//
// What the log does not say is taken from TopoFacts' defaults, each with where it comes from; the
// per-channel bandwidths of the ring and tree graphs (ncclTopoCompute's bwIntra/bwInter, printed
// only under NCCL_DEBUG_SUBSYS=GRAPH) are the figures that decide protocol boundaries.
#include "engine/plan/comm_shape.hpp"

namespace railcheck::plan {

// One graph as src/graph/search.cc ncclTopoCompute leaves it (the GRAPH line "Pattern 4,
// crossNic 0, nChannels 12, bw 30.000000/30.000000, ..."): before ncclTopoPostset doubles the
// channels into comm->nChannels, and before NCCL_MIN/MAX_NCHANNELS move that count.
// NCCL_TOPO_PATTERN_* (src/graph/topo.h): the shapes ncclTopoCompute searches.
inline constexpr int kPatternBalancedTree = 1;
inline constexpr int kPatternTree = 3;
inline constexpr int kPatternRing = 4;

struct TopoGraph {
  int pattern = kPatternRing;
  int channels = 1;
  float bw_intra = 1.2f;  // GB/s per channel
  float bw_inter = 1.2f;
};

struct TopoFacts {
  TopoGraph ring;                    // graphs[NCCL_ALGO_RING]
  TopoGraph tree{3, 1, 2.4f, 1.2f};  // graphs[NCCL_ALGO_TREE], which PAT uses too (init.cc)
  bool nvlink = false;               // graph->typeIntra == LINK_NVL: NVLink latencies
  bool amd_cpu = false;              // comm->cpuVendor: llMaxBws row and getNetOverhead (1 us Intel, 2 AMD)
  bool env_ll128_off = false;        // LL128 disabled by the path types (network: PATH_PHB > PATH_PXN)
};

// ncclTopoTuneModel's comm->latencies and comm->bandwidths for a Hopper GPU (compCap 90).
CostTables tune_model_2_28(const CommShape& shape, const TopoFacts& facts);

}  // namespace railcheck::plan
