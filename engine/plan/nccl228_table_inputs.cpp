// Recovering ncclTopoTuneModel's inputs from its printed, rounded output (nccl228_table_inputs.hpp).
#include "engine/plan/nccl228_table_inputs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "engine/plan/nccl228_cost_table.hpp"
#include "engine/plan/nccl228_topo_graphs.hpp"
#include "engine/plan/nccl228_tune_model.hpp"

namespace railcheck::plan {
namespace {

constexpr float kPrintHalfStep = 0.05f + 1e-4f;  // "%.1f" rounds to within half a step

// src/graph/search.cc: speedArrayIntra/Inter and their sm90 and sm100 versions, merged.
constexpr float kSearchSpeeds[] = {96.0f, 90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 48.0f, 45.1f, 45.0f, 42.0f, 40.0f,
                                   30.0f, 28.0f, 24.0f, 22.0f, 20.0f, 19.0f, 18.0f, 17.5f, 15.0f, 12.0f, 11.0f,
                                   10.0f, 9.0f,  7.0f,  6.0f,  5.0f,  4.0f,  3.0f,  2.4f,  1.2f,  0.24f, 0.12f};

// The per-channel bandwidths a graph may have had, given its all-reduce cells: Simple's, else
// LL's or LL128's (where NCCL_PROTO left Simple out), each printed to +-0.05, divided by what tuning.cc
// multiplies the bandwidth by (`simple_ratio`, `ll_ratio`). NCCL's graph bandwidths come from
// src/graph/search.cc ncclTopoCompute's speed arrays, halved when channels are duplicated
// (ncclTopoDupChannels), so those come first, then the 0.1 and 0.01 steps inside the interval,
// then the point estimate.
std::vector<float> candidates(const std::array<float, kNumProtocols>& cells, float simple_ratio, float ll_ratio,
                              float ll128_ratio) {
  const int p = cells[kProtoSimple] > 0 ? kProtoSimple : cells[kProtoLL] > 0 ? kProtoLL : kProtoLL128;
  const float cell = cells[static_cast<std::size_t>(p)];
  const float ratio = p == kProtoSimple ? simple_ratio : p == kProtoLL ? ll_ratio : ll128_ratio;
  if (cell <= 0 || ratio <= 0) return {};
  // LL128's cells are capped per channel (perChMax*LL128Bws), so its cell may not bound the graph's
  // bandwidth: every search speed is a candidate.
  if (p == kProtoLL128) return std::vector<float>(std::begin(kSearchSpeeds), std::end(kSearchSpeeds));
  const float lo = std::max(0.0f, cell - 0.05f) / ratio, hi = (cell + 0.05f) / ratio;
  std::vector<float> out;
  for (float divisor : {1.0f, 2.0f})
    for (float v : kSearchSpeeds)
      if (v / divisor >= lo && v / divisor <= hi) out.push_back(v / divisor);
  for (float step : {0.1f, 0.01f})
    for (float x = std::ceil(lo / step) * step; x <= hi && out.size() < 256; x += step)
      out.push_back(std::round(x / step) * step);
  out.push_back(cell / ratio);
  return out;
}

// The computed table with the printed zeros applied, if it rounds to every printed cell.
std::optional<CostTables> matching(const CostTables& computed, const CostTables& printed) {
  CostTables out = computed;
  out.printed = true;
  out.recomputed = true;
  for (std::size_t f = 0; f < kNumFunctions; ++f)
    for (std::size_t a = 0; a < kNumAlgorithms; ++a)
      for (std::size_t p = 0; p < kNumProtocols; ++p) {
        const float want_bw = printed.bandwidth[f][a][p];
        if (want_bw == 0) {
          out.bandwidth[f][a][p] = 0;  // disabled by NCCL (or never computed): stays disabled
          continue;
        }
        if (std::fabs(computed.bandwidth[f][a][p] - want_bw) > kPrintHalfStep ||
            std::fabs(computed.latency[f][a][p] - printed.latency[f][a][p]) > kPrintHalfStep)
          return std::nullopt;
      }
  return out;
}

}  // namespace

CostTables exact_tables(const CommShape& shape, const CostTables& printed) {
  // The printed zeros carry NCCL_ALGO / NCCL_PROTO (matching keeps them); the search runs on the
  // unrestricted tables, so a setting that contradicts the printed table cannot hide its values.
  CommShape s = shape;
  s.v228.enable = AlgoProtoEnable{};
  const auto nranks = static_cast<float>(s.nranks);
  const auto ar = static_cast<std::size_t>(func_index(CollOp::AllReduce));
  if (s.nranks < 2) return printed;
  // LL128 left on by the paths (or NCCL_PROTO): some LL128 cell is printed, whatever NCCL_ALGO kept.
  const bool ll128_printed =
      printed.bandwidth[ar][kAlgoRing][kProtoLL128] > 0 || printed.bandwidth[ar][kAlgoTree][kProtoLL128] > 0;
  // First the graphs ncclTopoCompute finds for the topology the INIT lines describe
  // (nccl228_topo_graphs), whatever NCCL_ALGO / NCCL_PROTO left printed.
  TopoFacts derived = derive_topo_facts(s);
  derived.env_ll128_off = !ll128_printed;
  if (auto t = matching(tune_model_2_28(s, derived), printed)) return *t;
  // The graphs' channel count: the communicator's, or one NCCL_MIN/MAX_NCHANNELS moved it from.
  for (int graph_channels : {static_cast<int>(s.coll_channels), 1, 2, 4, 8, 12, 16, 24, 32}) {
    const auto nch = static_cast<float>(graph_channels);
    // Ring all-reduce: nChannels x bw x nRanks / (2 (nRanks - 1)), x0.5 for LL (below its cap).
    const float ring_ratio = nch * nranks / (2 * (nranks - 1));
    const auto rings = candidates(printed.bandwidth[ar][kAlgoRing], ring_ratio, ring_ratio * 0.5f, ring_ratio * 0.92f);
    for (bool tree_pattern : {true, false}) {
      // Tree all-reduce: nChannels x bw x 0.92 (x 0.85 for the tree pattern) x 0.5, /3.8 for LL.
      const float tree_ratio = nch * 0.92f * (tree_pattern ? 0.85f : 1.0f) * 0.5f;
      const auto trees =
          candidates(printed.bandwidth[ar][kAlgoTree], tree_ratio, tree_ratio / 3.8f, tree_ratio * 120 / 128);
      // Where NCCL_ALGO disabled one graph's algorithm, its cells are all 0 and any value fits.
      for (float ring_bw : rings.empty() ? trees : rings)
        for (float tree_bw : trees.empty() ? rings : trees)
          for (bool nvlink : {true, false})
            for (bool amd : {false, true}) {
              TopoFacts f;
              f.ring = TopoGraph{4, graph_channels, ring_bw, ring_bw};
              f.tree = TopoGraph{tree_pattern ? 3 : 1, graph_channels, tree_bw, tree_bw};
              f.nvlink = nvlink;
              f.amd_cpu = amd;
              f.env_ll128_off = !ll128_printed;
              if (auto t = matching(tune_model_2_28(s, f), printed)) return *t;
            }
    }
  }
  return printed;
}

}  // namespace railcheck::plan
