#pragma once
// What NCCL 2.28.9's scheduler reads beyond CommShape, with the values NCCL prints at init
// (INIT subsystem) as defaults: the per-(algorithm, protocol) thread tables that decide a
// collective's channel count, the p2p chunk and LL buffer sizes that decide a p2p's, and the
// kernel-argument and work-FIFO sizes that bound a plan. Defaults are an H100 with NCCL 2.28.9
// over its network transport (scenarios/groundtruth/*/rank0.log).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace railcheck::plan {

// Which NCCL's enqueue path a replay follows.
enum class NcclVersion : std::uint8_t { V2_18, V2_28 };
std::optional<NcclVersion> nccl_version_from_name(std::string_view s);  // "2.18", "2.28"
std::string_view name(NcclVersion v);

// NCCL_ALGO_* and NCCL_PROTO_* indices (2.28.9 src/include/device.h).
constexpr int kNumAlgorithms = 7;  // Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
constexpr int kNumProtocols = 3;   // LL, LL128, Simple
constexpr int kAlgoTree = 0;
constexpr int kAlgoRing = 1;
constexpr int kProtoLL = 0;
constexpr int kProtoSimple = 2;
std::optional<int> algorithm_index(std::string_view s);  // case-insensitive "RING", "Tree", "PAT", ...
std::optional<int> protocol_index(std::string_view s);   // "LL", "LL128", "SIMPLE"

constexpr int kAlgoCollNetDirect = 2;
constexpr int kAlgoCollNetChain = 3;
constexpr int kAlgoNvls = 4;
constexpr int kAlgoNvlsTree = 5;
constexpr int kAlgoPat = 6;
constexpr int kProtoLL128 = 1;
std::string_view algorithm_name(int algo);  // "Tree", "Ring", ... as NCCL's ncclAlgoStr
std::string_view protocol_name(int proto);  // "LL", "LL128", "Simple"

using AlgoProtoTable = std::array<std::array<int, kNumProtocols>, kNumAlgorithms>;

// comm->latencies (us) and comm->bandwidths (GB/s) per function (ncclFunc_t order: Broadcast,
// Reduce, AllGather, ReduceScatter, AllReduce), algorithm and protocol, as src/graph/tuning.cc
// ncclTopoTuneModel leaves them: disabled combinations at bandwidth 0.
constexpr int kNumFunctions = 5;
using AlgoProtoCosts = std::array<std::array<float, kNumProtocols>, kNumAlgorithms>;
struct CostTables {
  std::array<AlgoProtoCosts, kNumFunctions> latency{};
  std::array<AlgoProtoCosts, kNumFunctions> bandwidth{};
  bool printed = false;     // read off a log's tuning table (nccl228_cost_table.hpp); else computed
  bool recomputed = false;  // printed, then recomputed exactly from its topology (nccl228_table_inputs.hpp)
};

// NCCL_PROTO and NCCL_ALGO as src/graph/tuning.cc ncclTopoTuneModel holds them (protoEnable,
// algoEnable), per function: 1 on, 0 off; LL128's default 2 = "on where the paths allow it".
// Filled by nccl228_algo_proto_env.hpp; applied where ncclTopoTuneModel applies them, as
// bandwidth 0 (nccl228_tune_model.cpp).
struct AlgoProtoEnable {
  std::array<std::array<std::int8_t, kNumProtocols>, kNumFunctions> proto{
      {{1, 2, 1}, {1, 2, 1}, {1, 2, 1}, {1, 2, 1}, {1, 2, 1}}};
  std::array<std::array<std::int8_t, kNumAlgorithms>, kNumFunctions> algo{{{1, 1, 1, 1, 1, 1, 1},
                                                                           {1, 1, 1, 1, 1, 1, 1},
                                                                           {1, 1, 1, 1, 1, 1, 1},
                                                                           {1, 1, 1, 1, 1, 1, 1},
                                                                           {1, 1, 1, 1, 1, 1, 1}}};
  bool operator==(const AlgoProtoEnable&) const = default;
};

struct Nccl228Params {
  std::uint32_t nnodes = 0;  // comm->nNodes; 0 = one rank per node (two host ids, as recorded)
  // comm->maxThreads (src/graph/tuning.cc ncclTopoTuneModel; the INIT "Max NThreads" rows).
  AlgoProtoTable max_threads{
      {{512, 640, 512}, {512, 640, 256}, {0, 0, 640}, {0, 0, 640}, {0, 0, 640}, {0, 0, 640}, {0, 0, 0}}};
  // comm->threadThresholds (tuning.cc: LL 8, LL128 8, Simple 64, Ring LL x nRanks, CollNet Simple
  // 512; the INIT "threadThresholds" line). Ring LL is scaled by nranks when this is built.
  AlgoProtoTable thread_thresholds{
      {{8, 8, 64}, {8, 8, 64}, {8, 8, 512}, {8, 8, 512}, {8, 8, 64}, {8, 8, 64}, {8, 8, 64}}};
  bool ring_ll_threshold_scaled = false;           // true once thread_thresholds came from a log (already scaled)
  std::uint64_t p2p_chunk_bytes = 128 * 1024;      // comm->p2pChunkSize (init.cc computeBuffSizes, P2P_NET_CHUNKSIZE)
  std::uint64_t ll_buff_bytes = 8 * 512 * 8 * 16;  // DEFAULT_LL_BUFFSIZE: LL lines/thread x threads x steps x 16 B
  // buffSizes[LL128] and buffSizes[SIMPLE] (init.cc computeBuffSizes: DEFAULT_LL128_BUFFSIZE, DEFAULT_BUFFSIZE or
  // NCCL_LL128_BUFFSIZE / NCCL_BUFFSIZE): a connection's slots hold buffSize / NCCL_STEPS each.
  std::uint64_t ll128_buff_bytes = 120 * 640 * 8 * 8;
  std::uint64_t simple_buff_bytes = 1ULL << 22;
  std::optional<std::int64_t> nthreads_env;    // NCCL_NTHREADS as this rank had it (Ring Simple's thread count)
  std::uint64_t p2p_ll_threshold = 16384;      // NCCL_P2P_LL_THRESHOLD (enqueue.cc)
  std::uint64_t work_args_bytes = 4096;        // min(NCCL_WORK_ARGS_BYTES, ncclMaxKernelArgsSize()) (init.cc)
  std::uint64_t work_fifo_bytes = 1ULL << 20;  // NCCL_WORK_FIFO_BYTES_DEFAULT (init.cc)
  std::uint32_t nvls_channels = 0;             // comm->nvlsChannels (INIT "N nvls channels")
  std::uint32_t local_ranks = 0;               // comm->maxLocalRanks (INIT "localRanks"); 0 = nranks / nodes
  // How ranks of one node reach each other (INIT transport lines "... via P2P/CUMEM", "via SHM").
  enum class IntraLink : std::uint8_t { Unknown, P2p, Shm, None };
  IntraLink intra_link = IntraLink::Unknown;
  bool max_threads_logged = false;  // max_threads came from the Max NThreads rows (TUNING table)
  // The tuner's tables: printed by NCCL (rank 0's TUNING table) or computed (nccl228_tune_model.hpp).
  std::optional<CostTables> costs;
  AlgoProtoEnable enable;  // NCCL_ALGO / NCCL_PROTO, for tables computed here (printed ones have them applied)

  int threads(int algo, int proto) const { return max_threads[algo][proto]; }
  // The bytes one step of a connection carries under `proto` (buffSizes[proto] / NCCL_STEPS): ranks
  // on either end of a ring or tree connection must agree on it.
  std::uint64_t step_bytes(int proto) const {
    return (proto == kProtoLL ? ll_buff_bytes : proto == kProtoLL128 ? ll128_buff_bytes : simple_buff_bytes) / 8;
  }
  int threshold(int algo, int proto, std::uint32_t nranks) const;
  std::uint32_t nodes(std::uint32_t nranks) const { return nnodes == 0 ? nranks : nnodes; }
  std::uint32_t ranks_per_node(std::uint32_t nranks) const {
    return local_ranks != 0 ? local_ranks : std::max<std::uint32_t>(1, nranks / nodes(nranks));
  }
};

}  // namespace railcheck::plan
