#pragma once
// NCCL 2.28.9's algorithm, protocol, channel and thread choice for one collective (or one
// aggregated run of collectives), as src/enqueue.cc getAlgoInfo makes it without a tuner plugin:
//
//   updateCollCostTable   which (algorithm, protocol) pairs may run this collective, and each
//                         one's cost from src/graph/tuning.cc ncclTopoGetAlgoTime:
//                         latency x latCount + nBytes / (1000 x bandwidth), with the tree
//                         correction factor, the ring plateau and the fp8 partition
//   topoGetAlgoInfo       the cheapest pair (first in algorithm, then protocol order on a tie),
//                         then its channel count (nc loop) and thread count (nt loop)
//
// The latency and bandwidth tables come from the communicator (Nccl228Params::costs: rank 0's
// printed table, or nccl228_tune_model's). Not modelled: tuner plugins, the CTA-efficiency
// policy's NVLS switch for registered buffers, symmetric kernels. CollNet and NVLS are chosen
// only where the tables enable them; the scheduler does not place them, so choosing one is an
// error that says so.
#include <cstdint>
#include <string>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/nccl_types.hpp"

namespace railcheck::plan {

struct TunedColl {
  int algo = kAlgoRing;
  int proto = kProtoSimple;
  int max_channels = 1;  // nMaxChannels
  int warps = 3;         // nWarps
  std::string rule;      // why, with the inputs, for reports
};

// What getAlgoInfo is asked about: the aggregate's function, reduction, datatype (as the task
// carries it: AllGather and Broadcast as bytes), its nBytes (elemSize x ncclFuncMaxSendRecvCount)
// and numPipeOps (ncclPrepareTasks' nTasksPerChannel).
struct TuneQuery {
  CollOp op = CollOp::AllReduce;
  RedOp redop = RedOp::Sum;
  DataType dtype = DataType::Float32;
  std::uint64_t nbytes = 0;
  int pipe_ops = 1;
};

// Picks the algorithm and protocol, then the channels and threads. `shape.v228.costs` must be set.
Result<TunedColl> tune_coll_2_28(const CommShape& shape, const TuneQuery& q);

// True when topoGetAlgoInfo finds no algorithm/protocol for `q` (every candidate at bandwidth 0,
// e.g. AllGather under NCCL_ALGO=Tree): NCCL fails the call with ncclInvalidUsage ("no
// algorithm/protocol available for function ..."), and so does the job.
bool no_algo_proto_2_28(const CommShape& shape, const TuneQuery& q);

// topoGetAlgoInfo's channel and thread count for an algorithm and protocol already chosen (a
// TUNING line, a profiler trace).
Result<TunedColl> algo_channels_2_28(const CommShape& shape, int algo, int proto, std::uint64_t nbytes);

// ncclTopoGetAlgoTime (src/graph/tuning.cc): the cost in us, or -1 where the bandwidth is 0.
float algo_time_2_28(const CommShape& shape, int func, int algo, int proto, std::uint64_t nbytes, int pipe_ops);

}  // namespace railcheck::plan
