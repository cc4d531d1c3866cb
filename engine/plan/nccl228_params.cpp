// Names and the one derived table entry of Nccl228Params (nccl228_params.hpp).
#include "engine/plan/nccl228_params.hpp"

#include <array>
#include <cctype>
#include <string>

namespace railcheck::plan {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<NcclVersion> nccl_version_from_name(std::string_view s) {
  if (s == "2.18") return NcclVersion::V2_18;
  if (s == "2.28") return NcclVersion::V2_28;
  return std::nullopt;
}

std::string_view name(NcclVersion v) { return v == NcclVersion::V2_18 ? "2.18" : "2.28"; }

std::optional<int> algorithm_index(std::string_view s) {
  static constexpr std::array<std::string_view, kNumAlgorithms> kNames = {
      "tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree", "pat"};
  const std::string l = lower(s);
  for (int a = 0; a < kNumAlgorithms; ++a)
    if (kNames[static_cast<std::size_t>(a)] == l) return a;
  return std::nullopt;
}

std::string_view algorithm_name(int algo) {
  static constexpr std::array<std::string_view, kNumAlgorithms> kNames = {
      "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  return algo >= 0 && algo < kNumAlgorithms ? kNames[static_cast<std::size_t>(algo)] : "?";
}

std::string_view protocol_name(int proto) {
  static constexpr std::array<std::string_view, kNumProtocols> kNames = {"LL", "LL128", "Simple"};
  return proto >= 0 && proto < kNumProtocols ? kNames[static_cast<std::size_t>(proto)] : "?";
}

std::optional<int> protocol_index(std::string_view s) {
  const std::string l = lower(s);
  if (l == "ll") return 0;
  if (l == "ll128") return 1;
  if (l == "simple") return 2;
  return std::nullopt;
}

// src/graph/tuning.cc ncclTopoTuneModel: threadThresholds[RING][LL] *= nRanks.
int Nccl228Params::threshold(int algo, int proto, std::uint32_t nranks) const {
  const int t = thread_thresholds[algo][proto];
  if (algo == kAlgoRing && proto == kProtoLL && !ring_ll_threshold_scaled) return t * static_cast<int>(nranks);
  return t;
}

}  // namespace railcheck::plan
