#pragma once
// The tables NCCL 2.28.9's tuner reads: per function, algorithm and protocol, the latency (us) and
// bus bandwidth (GB/s) that src/graph/tuning.cc ncclTopoTuneModel computes at init, with the
// algorithms and protocols NCCL disabled (NCCL_ALGO, NCCL_PROTO, LL128 off the NVLink/PXN paths,
// CollNet/NVLS unsupported) already at bandwidth 0. Rank 0 prints them under NCCL_DEBUG_SUBSYS=TUNING
// (ncclTopoTuneModel, "if (comm->rank == 0)"), three algorithms per block:
//
//     Algorithm   |          Tree          |          Ring          |     CollNetDirect     |
//     Protocol    |   LL |  LL128 | Simple |   LL |  LL128 | Simple | ...
//    Max NThreads |  512 |    640 |    512 |  512 |    640 |    256 | ...
//       Broadcast |  0.0/ 0.0 | ...      one "latency/bandwidth" cell per (algorithm, protocol)
//          Reduce | ...        AllGather | ...   ReduceScatter | ...   AllReduce | ...
//
// The cells are printed with one decimal ("%8.1f/%6.1f"): a bandwidth printed 0.0 is taken as
// disabled (a real one is never below 0.05 GB/s), and costs computed from the printed values can
// differ from NCCL's in the last digit, which only matters for sizes at a protocol boundary.
#include <optional>
#include <string_view>

#include "engine/core/result.hpp"
#include "engine/plan/nccl228_params.hpp"
#include "engine/plan/nccl_types.hpp"

namespace railcheck::plan {

// ncclFunc_t's index of a collective (src/include/nccl_common.h), the tables' first index.
int func_index(CollOp op);
// Its inverse: ncclFuncStr's order (src/init.cc), 0 <= f < kNumFunctions.
CollOp func_op(int f);

// The first complete set of tables in a log's text, or nothing when the log has none (TUNING not
// among the subsystems, or not rank 0's log). A block that starts but does not parse is an error
// naming the line.
Result<std::optional<CostTables>> parse_cost_tables(std::string_view text, std::string_view origin);

}  // namespace railcheck::plan
