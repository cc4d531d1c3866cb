#pragma once
// A kernel plan as the host scheduler leaves it (2.18 struct ncclKernelPlan): per channel, the
// ordered work the kernel's block for that channel runs, and the collective byte counter the
// channel picker reads. Also where each collective went, for the cross-rank comparison.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/plan/task.hpp"

namespace railcheck::plan {

// One side of a p2p transfer inside a work item. NCCL puts round i's send and receive in one
// work item on the same channel; each half is matched with the peer's opposite half.
struct P2pHalf {
  bool present = false;
  std::uint32_t peer = 0;
  std::uint64_t bytes = 0;
  std::uint32_t part = 0;
  // Send half: what the connection's buffer holds before the receiver gets there (NCCL_STEPS
  // slots of the p2p chunk; half the LL buffer under LL). A part that fits completes without
  // its receiver, as a real send kernel does; 0 = the send waits for its receiver (the 2.18
  // model, which leaves it out).
  std::uint64_t buffer_bytes = 0;
};

struct WorkItem {
  enum class Kind : std::uint8_t { Coll, P2p };
  Kind kind = Kind::Coll;
  std::uint32_t coll_seq = 0;  // Coll: index of the collective in this rank's stream
  std::uint32_t bid = 0;       // Coll: which of its nBid shares
  P2pHalf send;                // P2p
  P2pHalf recv;                // P2p
};

struct PlanChannel {
  std::vector<WorkItem> work;
  std::uint64_t coll_bytes = 0;  // chans[c].collBytes
};

struct KernelPlan {
  std::uint32_t index = 0;  // launch order on its rank
  std::uint32_t group = 0;  // which TaskGroup it came from
  bool persistent = false;
  std::vector<PlanChannel> channels;
  std::uint64_t work_items = 0;

  // finishPlan's channelMask: the channels that have work, hence blocks in the kernel.
  std::uint64_t channel_mask() const;
  bool empty() const { return work_items == 0; }
};

// Where one collective went on one rank and why: the loads the picker saw.
struct CollPlacement {
  std::uint32_t coll_seq = 0;
  std::uint32_t group = 0;
  std::uint32_t plan = 0;
  CollTask task;
  std::vector<std::uint32_t> channels;      // least[] order
  std::vector<std::uint64_t> loads_before;  // collBytes of the collective channels
  // The rest of the collective's plan that both ends of each connection must share (2.28 model;
  // -1 / 0 where the model does not decide it): NCCL_ALGO_* and NCCL_PROTO_* indices, warps per
  // block, and the bytes a connection step carries under that protocol (buffSizes[proto] / NCCL_STEPS).
  int algo = -1;
  int proto = -1;
  int warps = 0;
  std::uint64_t step_bytes = 0;
};

// A collective NCCL refuses on this rank (2.28 topoGetAlgoInfo: no algorithm/protocol left by its
// settings): the call returns ncclInvalidUsage, so the rank launches nothing from there on.
struct Refusal {
  std::uint32_t coll_seq = 0;
  std::string what;
};

struct RankSchedule {
  std::uint32_t rank = 0;
  std::vector<KernelPlan> plans;
  std::vector<CollPlacement> colls;
  std::optional<Refusal> refused;
};

}  // namespace railcheck::plan
