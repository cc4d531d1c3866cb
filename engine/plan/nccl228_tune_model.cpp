// ncclTopoTuneModel, NCCL 2.28.9 src/graph/tuning.cc (nccl228_tune_model.hpp): Ring, Tree, PAT.
#include "engine/plan/nccl228_tune_model.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include "engine/plan/nccl228_cost_table.hpp"

namespace railcheck::plan {
namespace {

enum Hw { kNvlink = 0, kPci = 1, kNet = 2 };  // NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET

// ncclTunerConstantsDefaults (tuning.cc), the Tree/Ring/PAT rows, LL/LL128/Simple.
constexpr float kBaseLat[kNumAlgorithms][kNumProtocols] = {
    {6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0f, 8.0f, 8.0f}};
constexpr float kHwLat[3][kNumAlgorithms][kNumProtocols] = {
    {{.6f, 1.25f, 4.0f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0f}},
    {{1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0f}},
    {{5.0f, 8.5f, 14}, {2.7f, 4.0f, 14.0f}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9f}, {0, 0, 14}},
};
// Hopper's column of llMaxBws (N1 by GPU; N2/N4 rows by CPU: Intel row 0, AMD row 1) and the
// per-channel caps, indexed by min(nNodes, 3) - 1.
constexpr float kLlMaxBwHopperOneNode = 141.0f;
constexpr float kLlMaxBwIntel[3] = {39.0f, 39.0f, 20.4f};
constexpr float kLlMaxBwAmd[3] = {87.7f, 22.5f, 19.0f};
constexpr float kPerChRingLL128[3] = {36.7f, 36.7f, 36.7f};
constexpr float kPerChTreeLL128[3] = {36.7f, 36.7f, 29.0f};
constexpr float kPerChTree[3] = {38.7f, 41.4f, 36.0f};

int log2i(std::uint32_t n) { return n == 0 ? -1 : static_cast<int>(std::bit_width(n)) - 1; }

}  // namespace

CostTables tune_model_2_28(const CommShape& s, const TopoFacts& facts) {
  CostTables t;
  const int nranks = static_cast<int>(s.nranks);
  const int nnodes = static_cast<int>(s.v228.nodes(s.nranks));
  if (nranks <= 1) return t;  // "if (nRanks <= 1) return ncclSuccess;"
  const auto index2 = static_cast<std::size_t>(std::min(nnodes, 3) - 1);
  const double ll_max_bw = nnodes == 1 ? kLlMaxBwHopperOneNode : (facts.amd_cpu ? kLlMaxBwAmd : kLlMaxBwIntel)[index2];
  const float ppn = static_cast<float>(nranks) / static_cast<float>(nnodes);
  const int intra_hw = facts.nvlink ? kNvlink : kPci;
  const int hw = nnodes == 1 ? intra_hw : kNet;
  // ncclPatEnable: one GPU per node (and a host network device, SM60+).
  const bool pat = nnodes == nranks;
  for (int coll = 0; coll < kNumFunctions; ++coll) {
    const bool ar = coll == func_index(CollOp::AllReduce);
    const bool ag_rs = coll == func_index(CollOp::AllGather) || coll == func_index(CollOp::ReduceScatter);
    const bool bc_red = coll == func_index(CollOp::Broadcast) || coll == func_index(CollOp::Reduce);
    const int nsteps = ar ? 2 * (nranks - 1) : ag_rs ? nranks - 1 : nranks;
    for (int a : {kAlgoTree, kAlgoRing, kAlgoPat}) {
      if (bc_red && a != kAlgoRing) continue;
      if (ag_rs && a == kAlgoTree) continue;
      if (ar && a == kAlgoPat) continue;
      for (int p = 0; p < kNumProtocols; ++p) {
        if (a == kAlgoPat && (p != kProtoSimple || !pat)) continue;
        const TopoGraph& g = a == kAlgoRing ? facts.ring : facts.tree;
        const auto nch = static_cast<float>(g.channels);
        float bus = nch * (nnodes <= 2 ? g.bw_intra : g.bw_inter);
        if (a == kAlgoRing && p == kProtoLL) bus = static_cast<float>(std::min(ll_max_bw, bus * .5));
        if (a == kAlgoRing && p == kProtoLL128)
          bus = static_cast<float>(std::min(bus * 0.92, nch * double(kPerChRingLL128[index2])));
        if (a == kAlgoTree && ar) bus = static_cast<float>(std::min(bus * .92, nch * double(kPerChTree[index2])));
        if (a == kAlgoTree && p == kProtoLL) bus = static_cast<float>(std::min(bus * 1.0 / 3.8, ll_max_bw));
        if (a == kAlgoTree && p == kProtoLL128)
          bus = static_cast<float>(
              std::min(bus * (nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * double(kPerChTreeLL128[index2])));
        // A tree of one GPU per node (comm->maxTreePattern == NCCL_TOPO_PATTERN_TREE) runs at 0.85.
        if (a == kAlgoTree && facts.tree.pattern == kPatternTree) bus = static_cast<float>(bus * .85);
        if (a == kAlgoPat) bus = static_cast<float>(bus * .75);
        // "Convert bus BW to algorithm BW"
        if (!(a != kAlgoRing && ag_rs)) bus = static_cast<float>(bus * (a == kAlgoRing ? (1.0 * nranks) / nsteps : .5));
        const auto uc = static_cast<std::size_t>(coll), ua = static_cast<std::size_t>(a),
                   up = static_cast<std::size_t>(p);
        // ncclTopoTuneModel's enable pass: NCCL_PROTO (protoEnable) and NCCL_ALGO (algoEnable) set
        // bandwidth 0; LL128 left at its default 2 is on only on Hopper paths up to PXN and NVB.
        const int p_enable = s.v228.enable.proto[uc][up];
        if (p_enable == 0 || (p_enable == 2 && facts.env_ll128_off) || s.v228.enable.algo[uc][ua] == 0) bus = 0;
        t.bandwidth[uc][ua][up] = bus;
        float lat = kBaseLat[a][p];
        float intra_lat = kHwLat[intra_hw][a][p];
        // "With ppn=1 latencies are fully exposed, use the Tree network latency"; latencyInter 0.
        const float inter_lat = ppn == 1 ? kHwLat[kNet][kAlgoTree][p] : kHwLat[kNet][a][p];
        if (a == kAlgoRing) {
          const float hw_lat = kHwLat[hw][a][p];
          if (bc_red) {
            lat += hw_lat;  // graph->sameChannels
          } else {
            float net_overhead = 0;
            if (nnodes > 1) net_overhead = (facts.amd_cpu ? 2.0f : 1.0f) * (p == kProtoSimple ? 3 : 1);
            intra_lat = std::max(intra_lat, net_overhead);
            const int inter_steps = nnodes == 1 ? 0 : ar ? 2 * (nnodes - 1) : nnodes - 1;
            lat += static_cast<float>(nsteps - inter_steps) * intra_lat + static_cast<float>(inter_steps) * inter_lat;
          }
        } else if (a == kAlgoTree) {
          if (ar)
            lat += 2 * (static_cast<float>(nranks / nnodes - 1) * intra_lat +
                        static_cast<float>(log2i(static_cast<std::uint32_t>(nnodes))) * inter_lat);
        } else if (ag_rs) {
          lat += static_cast<float>(log2i(static_cast<std::uint32_t>(nnodes))) * (inter_lat / 3.5f) +
                 static_cast<float>(nranks) * 2.8f;
        }
        t.latency[uc][ua][up] = lat;
      }
    }
  }
  return t;
}

}  // namespace railcheck::plan
