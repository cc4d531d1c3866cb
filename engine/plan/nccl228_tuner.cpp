// getAlgoInfo without a tuner plugin, NCCL 2.28.9 src/enqueue.cc (nccl228_tuner.hpp).
#include "engine/plan/nccl228_tuner.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>

#include "engine/plan/groundtruth.hpp"
#include "engine/plan/nccl228_cost_table.hpp"

namespace railcheck::plan {
namespace {

constexpr int kWarpSize = 32;                 // WARP_SIZE (src/include/device.h)
constexpr int kMaxNThreads = 640;             // NCCL_MAX_NTHREADS
constexpr int kMaxDevWorkBatchColls = 10;     // NCCL_MAX_DEV_WORK_BATCH_COLLS: 1024 B / sizeof(ncclDevWorkColl) 96 B
constexpr std::uint32_t kMaxDirectArity = 7;  // NCCL_MAX_DIRECT_ARITY
constexpr std::uint32_t kMaxNvlsArity = 32;   // NCCL_MAX_NVLS_ARITY

// src/graph/tuning.cc treeCorrectionFactor: Tree AllReduce, by protocol and log2(nBytes / 64).
constexpr std::array<std::array<float, 23>, kNumProtocols> kTreeCorrection = {{
    {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f,  .7f,  .7f,  .6f, .5f,
     .4f,  .4f,  .5f,  .6f,  .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f},
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f,  .6f, .6f,
     .6f,  .6f,  .6f,  .6f,  .8f,  .9f, .9f, .9f, .9f, 1.0f, 1.0f},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f},
}};

// src/include/device.h ncclNvlsSupported, on the host reduction (hostToDevRedOp: Max/Min run as
// MinMax, Avg as PreMulSum or SumPostDiv, neither of which NVLS has).
bool nvls_supported(RedOp op, DataType t) {
  const bool sum = op == RedOp::Sum, min_max = op == RedOp::Max || op == RedOp::Min;
  switch (t) {
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Float16:
    case DataType::Bfloat16: return sum || min_max;
    case DataType::Float32:
    case DataType::Float64: return sum;
    default: return false;
  }
}

// updateCollCostTable's filters, before any cost: may this algorithm run this collective here?
bool algorithm_allowed(const CommShape& s, const TuneQuery& q, int a, bool collnet) {
  const auto local = s.v228.ranks_per_node(s.nranks);
  const bool multi_node = s.v228.nodes(s.nranks) > 1;
  if ((a == kAlgoCollNetDirect || a == kAlgoCollNetChain) && (!collnet || local > kMaxDirectArity + 1)) return false;
  if (a == kAlgoNvls || a == kAlgoNvlsTree) {
    // getCollNetSupport / ncclPrepareTasks' nvlsSupport: the comm has NVLS, and the kernel exists.
    const bool nvls = s.v228.nvls_channels > 0 && (nvls_supported(q.redop, q.dtype) || q.op == CollOp::AllGather);
    if (!nvls || (q.op != CollOp::AllReduce && local > kMaxNvlsArity)) return false;
    if (a == kAlgoNvls && !collnet && multi_node) return false;
  }
  // "Tree reduceScatter doesn't support scaling yet": Avg is PreMulSum or SumPostDiv.
  if (a == kAlgoPat && q.op == CollOp::ReduceScatter && q.redop == RedOp::Avg) return false;
  return true;
}

}  // namespace

float algo_time_2_28(const CommShape& s, int f, int a, int p, std::uint64_t nbytes, int pipe_ops) {
  const auto& costs = *s.v228.costs;
  const auto uf = static_cast<std::size_t>(f), ua = static_cast<std::size_t>(a), up = static_cast<std::size_t>(p);
  float bw = costs.bandwidth[uf][ua][up];
  float lat = costs.latency[uf][ua][up];
  if (bw == 0) return -1.0f;
  // log2i(nBytes >> 6): -1 for 0.
  const int log_size = (nbytes >> 6) == 0 ? -1 : static_cast<int>(std::bit_width(nbytes >> 6)) - 1;
  if (a == kAlgoTree && f == func_index(CollOp::AllReduce) && log_size >= 0 && log_size < 23)
    bw *= kTreeCorrection[up][static_cast<std::size_t>(log_size)];
  // "Plateau effect of ring"; minCompCap >= 80 (the model's GPUs, Nccl228Params).
  if (a == kAlgoRing && p == kProtoSimple && s.v228.nodes(s.nranks) > 1 && f == func_index(CollOp::AllReduce) &&
      nbytes / (static_cast<std::uint64_t>(s.coll_channels) * s.nranks) >= 64)
    lat = static_cast<float>(lat * 1.4);
  // "Tree pipelining saves latency in aggregation cases"
  const int lat_count = a == kAlgoRing ? pipe_ops : (pipe_ops + kMaxDevWorkBatchColls - 1) / kMaxDevWorkBatchColls;
  return lat * static_cast<float>(lat_count) + static_cast<float>(nbytes) / (1000.0f * bw);
}

Result<TunedColl> algo_channels_2_28(const CommShape& s, int algo, int proto, std::uint64_t nbytes) {
  if (algo == kAlgoNvls || algo == kAlgoNvlsTree || algo == kAlgoCollNetDirect || algo == kAlgoCollNetChain)
    return Error{fmt::format("{}/{}: the 2.28 model does not place NVLS or CollNet collectives", algorithm_name(algo),
                             protocol_name(proto)),
                 "set NCCL_NVLS_ENABLE=0 / NCCL_COLLNET_ENABLE=0, or read the channels off a trace"};
  TunedColl t;
  t.algo = algo;
  t.proto = proto;
  const int nt0 = s.v228.threads(algo, proto);
  const int thr = s.v228.threshold(algo, proto, s.nranks);
  // topoGetAlgoInfo, "Ring/Tree channel tuning" (PAT takes the same branch).
  const int nc = ring_tree_channels_2_28(nbytes, static_cast<int>(s.coll_channels), nt0, thr);
  // Then halve the threads while a multiple of 128 and still too many for the bytes.
  int nt = nt0;
  while (nbytes < static_cast<std::uint64_t>(nc) * static_cast<std::uint64_t>(nt) * static_cast<std::uint64_t>(thr) &&
         nt % 128 == 0)
    nt /= 2;
  if (proto == kProtoSimple) {
    if (algo == kAlgoRing) nt += kWarpSize;  // "Extra warp for sync"
    if (algo == kAlgoTree) nt += 4 * kWarpSize;
  }
  if (nt / kWarpSize < 3) nt = 3 * kWarpSize;
  if (algo == kAlgoTree || algo == kAlgoPat) nt = kMaxNThreads;  // "uses all threads always"
  t.max_channels = nc;
  t.warps = nt / kWarpSize;
  t.rule = fmt::format(
      "enqueue.cc topoGetAlgoInfo: nMaxChannels {} of {} (drop one while nBytes {} < nc x maxThreads {} x "
      "threadThreshold {}), {} warps",
      nc, s.coll_channels, nbytes, nt0, thr, t.warps);
  return t;
}

namespace {

// updateCollCostTable + topoGetAlgoInfo's selection: the cheapest (algorithm, protocol), and the runner-up for reports.
struct Pick {
  int algo = -1, proto = -1;
  float best = 3600000000.0f;  // minTime
  int runner_algo = -1, runner_proto = -1;
  float runner_up = -1;
};

Pick pick_algo_proto(const CommShape& s, const TuneQuery& q) {
  const auto& costs = *s.v228.costs;
  const int f = func_index(q.op);
  // getCollNetSupport needs config.collnetEnable, which the tables show as CollNet bandwidth.
  bool collnet = false;
  for (int a : {kAlgoCollNetDirect, kAlgoCollNetChain})
    for (float bw : costs.bandwidth[static_cast<std::size_t>(f)][static_cast<std::size_t>(a)]) collnet |= bw > 0;
  Pick k;
  if (s.nranks == 1) {
    k.algo = kAlgoRing;  // updateCollCostTable: one rank is Ring/Simple at cost 0
    k.proto = kProtoSimple;
    k.best = 0;
    return k;
  }
  for (int a = 0; a < kNumAlgorithms; ++a) {
    if (!algorithm_allowed(s, q, a, collnet)) continue;
    for (int p = 0; p < kNumProtocols; ++p) {
      float t = algo_time_2_28(s, f, a, p, q.nbytes, q.pipe_ops);
      // "Relegate fp8 reduction trees of sufficient depth that they incur precision loss"
      if ((q.dtype == DataType::Fp8E4M3 || q.dtype == DataType::Fp8E5M2) && a == kAlgoRing && s.nranks > 8)
        t *= 1024.0f;
      if (t < 0) continue;
      if (t < k.best) {
        if (k.algo >= 0) k.runner_up = k.best, k.runner_algo = k.algo, k.runner_proto = k.proto;
        k.best = t, k.algo = a, k.proto = p;
      } else if (k.runner_up < 0 || t < k.runner_up) {
        k.runner_up = t, k.runner_algo = a, k.runner_proto = p;
      }
    }
  }
  return k;
}

}  // namespace

bool no_algo_proto_2_28(const CommShape& s, const TuneQuery& q) {
  return s.v228.costs && pick_algo_proto(s, q).algo < 0;
}

Result<TunedColl> tune_coll_2_28(const CommShape& s, const TuneQuery& q) {
  if (!s.v228.costs) return Error{"the 2.28 tuner has no latency/bandwidth tables", "a bug: set Nccl228Params::costs"};
  const Pick k = pick_algo_proto(s, q);
  if (k.algo < 0)
    return Error{fmt::format("{}: no algorithm/protocol has a bandwidth in the tuning table", name(q.op)),
                 "NCCL fails this too (topoGetAlgoInfo); check NCCL_ALGO / NCCL_PROTO"};
  auto t = algo_channels_2_28(s, k.algo, k.proto, q.nbytes);
  if (!t) return t;
  t->rule = fmt::format(
      "enqueue.cc updateCollCostTable/topoGetAlgoInfo: {}/{} costs {:.2f} us for nBytes {} x{} pipelined op{} "
      "({} tuning table){}; {}",
      algorithm_name(k.algo), protocol_name(k.proto), k.best, q.nbytes, q.pipe_ops, q.pipe_ops == 1 ? "" : "s",
      s.v228.costs->printed ? "NCCL's printed" : "computed",
      k.runner_algo < 0 ? ""
                        : fmt::format(", next {}/{} {:.2f} us", algorithm_name(k.runner_algo),
                                      protocol_name(k.runner_proto), k.runner_up),
      t->rule);
  return t;
}

}  // namespace railcheck::plan
