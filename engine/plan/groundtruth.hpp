#pragma once
// What real NCCL scheduled, read back from the profiler plugin's JSON lines
// (backends/hw/nccl_profiler, format in docs/plan.md "Ground truth") and from the TUNING lines of
// an NCCL log (`<Func>: <bytes> Bytes -> Algo <A> proto <P> channel{Lo..Hi}={lo..hi}`, printed by
// NCCL 2.28.9 src/enqueue.cc topoGetAlgoInfo). Pure: text in, structures out.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::plan {

// One coll or p2p task of one rank, in the order NCCL started it.
struct TruthOp {
  bool is_coll = true;
  std::string func;  // AllReduce, Broadcast, ..., Send, Recv
  std::uint64_t count = 0;
  std::string dtype;
  int root_or_peer = 0;
  int nchannels = 0;       // as NCCL reported it in the task descriptor
  std::string algo;        // collectives only
  std::string proto;       // collectives only
  int warps = 0;           // collectives only: nWarps
  int plan = 0;            // index of the kernel plan (0, 1, ...) on this rank
  int position = 0;        // order of the task in its plan (NCCL: collectives, then p2p)
  int call = -1;           // index in TruthTrace::calls of the user call it came from
  std::set<int> channels;  // kernel-channel events of this task
};

// One user call (coll_api / p2p_api event), in issue order, and the launch (group end) it
// belongs to: the calls recorded since the previous kernel launch. The profiler's group_api
// events are not launch boundaries (PyTorch's coalescing opens one per call).
struct TruthCall {
  bool is_coll = true;
  std::string func;
  std::uint64_t count = 0;
  std::string dtype;
  int root = 0;
  int group = 0;  // launch index on this rank
  int task = -1;  // index in TruthTrace::ops of its task, -1 if NCCL never scheduled it
};

struct TruthTrace {
  int rank = -1;
  int nranks = 0;
  int nnodes = 0;
  int plans = 0;
  std::uint64_t dropped = 0;
  std::vector<TruthOp> ops;
  std::vector<TruthCall> calls;
  std::vector<int> group_first_plan;  // by launch: index of its first plan
};

// Parses one rank's trace. Errors name the line (1-based) of `origin`.
Result<TruthTrace> parse_truth_trace(std::string_view text, std::string_view origin);

// One TUNING line of a log.
struct TuningLine {
  std::string func;
  std::uint64_t bytes = 0;
  std::string algo;
  std::string proto;
  int lo = 0;
  int hi = 0;
};

// Every TUNING line of a log's text, in order. Lines that do not have the TUNING shape are skipped
// (a log holds INIT and COLL lines too); a line that has the shape's start but not its end is an error.
Result<std::vector<TuningLine>> parse_tuning_lines(std::string_view text, std::string_view origin);

// The collectives of a trace against the TUNING lines of the same rank, in order: function,
// algorithm, protocol and channel set {lo..hi} must agree.
struct TruthCheck {
  int compared = 0;
  int matched = 0;
  std::string first_mismatch;  // empty when all matched and the counts agree
};
TruthCheck check_tuning_against_trace(const TruthTrace& trace, const std::vector<TuningLine>& tuning);

// Two ranks' traces against each other: same operations in the same plans on the same channels
// (for p2p, a Send's channels on one rank against the matching Recv on the other).
TruthCheck check_ranks_agree(const TruthTrace& a, const TruthTrace& b);

}  // namespace railcheck::plan

namespace railcheck::plan {

// NCCL 2.28.9's channel count for a Ring or Tree collective (src/enqueue.cc topoGetAlgoInfo,
// "Ring/Tree channel tuning"): start from the communicator's channels and drop one while
// nBytes < nc * maxThreads[algo][proto] * threadThresholds[algo][proto], never below 1.
int ring_tree_channels_2_28(std::uint64_t nbytes, int comm_channels, int max_threads, int thread_threshold);

}  // namespace railcheck::plan
