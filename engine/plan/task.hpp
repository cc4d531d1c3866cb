#pragma once
// What one rank asks NCCL to do between ncclGroupStart and ncclGroupEnd: the task queues
// ncclLaunchPrepare drains (NCCL 2.18 enqueue.cc, tasks->collQueue and tasks->peers[]).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/plan/nccl_types.hpp"

namespace railcheck::plan {

struct CollTask {
  CollOp op = CollOp::AllReduce;
  std::uint64_t count = 0;
  DataType dtype = DataType::Float32;
  RedOp redop = RedOp::Sum;
  // As NCCL tuned it (a TUNING line, a trace's algo/proto), or empty: the 2.28 model's tuner
  // decides (nccl228_tuner.hpp); the 2.18 model treats both as labels.
  std::string algorithm;
  std::string protocol;
  std::uint32_t channels = 0;  // nBid; 0 = derive from the bytes (channel_count.hpp)
  // The channel range NCCL logged for it (a 2.28 TUNING line, `channel{Lo..Hi}`), -1 = none:
  // what real NCCL did, held against the replay's choice (sched_replay.hpp tuning_agreement).
  int logged_lo = -1;
  int logged_hi = -1;
  // Whose TUNING line gave algorithm, protocol and the logged range: NCCL decides them the same
  // way on every rank of the communicator, so one rank's line stands for all (logged_choices.hpp).
  // -1 = no line.
  int logged_by = -1;
  std::uint32_t source_line = 0;  // where the trace or log said so, for reports

  std::uint64_t bytes() const { return count * size_of(dtype); }
};

enum class P2pDir : std::uint8_t { Send, Recv };

struct P2pTask {
  P2pDir dir = P2pDir::Send;
  std::uint32_t peer = 0;
  std::uint64_t bytes = 0;
  std::uint32_t source_line = 0;
};

// One launch: the tasks of one group (an operation outside any group is a group of its own).
struct TaskGroup {
  std::vector<CollTask> colls;
  std::vector<P2pTask> p2ps;
  // PassSm only: the pre-scheduled p2p copies finished before the group's collectives were
  // scheduled, so the channel loads they added are gone again. A timing fact, unknown in logs:
  // false (still in flight) is the default and the case the seed hit.
  bool p2p_done_before_end = false;
};

// Every group one rank launched, in order.
struct RankStream {
  std::uint32_t rank = 0;
  std::vector<TaskGroup> groups;
};

}  // namespace railcheck::plan
