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

struct TopoFacts {
  // Per channel, GB/s (graph->bwIntra, which tuning.cc uses up to 2 nodes, and bwInter beyond).
  // Network defaults: the recorded H100s over NET/Socket (scenarios/groundtruth: their printed
  // Ring Simple AllReduce 1.2 GB/s over 2 channels, Tree 0.9 after x0.92 x0.85 x0.5).
  // One node: an NVLink ring, 20 GB/s per channel (speedArrayIntra's sm90 step; an assumption).
  float ring_bw = 0.6f;
  float tree_bw = 1.2f;  // the tree graph, which PAT uses too (init.cc: graphs[] = {tree, ring, ..., tree})
  // graph->nChannels of the ring and tree graphs, before NCCL_MIN/MAX_NCHANNELS and duplication
  // set comm->nChannels (the recorded runs print 2-channel tables under either); 0 = comm's.
  int graph_channels = 0;
  bool nvlink = false;         // graph->typeIntra == LINK_NVL: NVLink latencies, LL128 allowed
  bool tree_pattern = true;    // comm->maxTreePattern == NCCL_TOPO_PATTERN_TREE (x0.85 on Tree)
  bool amd_cpu = false;        // comm->cpuVendor: llMaxBws row and getNetOverhead (1 us Intel, 2 AMD)
  bool env_ll128_off = false;  // LL128 disabled by the path types (network: PATH_NET > PATH_PXN)
};

// The defaults for `shape`: one node means NVLink, several mean the network figures above.
TopoFacts default_topo_facts(const CommShape& shape);

// ncclTopoTuneModel's comm->latencies and comm->bandwidths for a Hopper GPU (compCap 90).
CostTables tune_model_2_28(const CommShape& shape, const TopoFacts& facts);

}  // namespace railcheck::plan
