#pragma once
// NCCL 2.28.9's collective task preparation, before any plan exists (src/enqueue.cc
// collTaskAppend and ncclPrepareTasks; src/include/comm.h ncclTaskCollSorter): tasks are sorted
// by traffic (descending, in bins of a quarter power of two), binned by (function, reduction,
// datatype), walked size-ascending within a bin, and tasks within 4x of the smallest of a run are
// aggregated: the run's summed size decides its algorithm, protocol and channel limit
// (getAlgoInfo, nccl228_tuner), which every task of the run takes. The result is the order
// scheduleCollTasksToPlan consumes.
//
// A task's algorithm and protocol may be given (a TUNING line, a profiler trace, the trace's
// algo/proto): the first task of a run then gives the run's, as the tuner would have on every
// rank. Not modelled: NVLS, CollNet and symmetric-memory kernels.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/plan/comm_shape.hpp"
#include "engine/plan/task.hpp"

namespace railcheck::plan {

struct PreparedColl {
  std::uint32_t input = 0;  // index into the group's colls
  std::uint64_t count = 0;  // elements, after collTaskAppend's byte view of AllGather/Broadcast
  std::uint32_t elem_size = 0;
  std::uint64_t traffic = 0;  // trafficBytes, x4 for LL (ncclPrepareTasks)
  int algo = kAlgoRing;
  int proto = kProtoSimple;
  int max_channels = 1;  // nMaxChannels
  int warps = 3;         // nWarps
  std::string func_key;  // devFuncId stand-in: (func, redop, dtype, algo, proto)
  std::string rule;      // how max_channels was decided, for reports
};

// Bytes per element of traffic for a function (enqueue.cc ncclFuncTrafficPerByte).
int traffic_per_byte(CollOp op, std::uint32_t nranks);

// Operations larger than this (1 TiB) are refused: the cell arithmetic is signed 64-bit and
// multiplies bytes by up to 4 x nranks of traffic per byte.
constexpr std::uint64_t kMaxModelBytes = 1ULL << 40;

// Collectives of count 0 get no task (enqueue.cc taskAppend discards them) and are left out.
// `shape.v228.costs` must be set (the tuner's tables). Fails on an algorithm or protocol name the
// model does not know, or on a choice the model cannot place (NVLS, CollNet).
Result<std::vector<PreparedColl>> prepare_colls_2_28(const CommShape& shape, const std::vector<CollTask>& colls);

}  // namespace railcheck::plan
