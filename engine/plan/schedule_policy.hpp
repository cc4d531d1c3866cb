#pragma once
// The order in which a rank's scheduler drains its task queues. NCCL drains collectives first
// and p2p only once no collective is left (2.18 ncclLaunchPrepare: "Drain coll tasks first.
// This is essential since we partition tasks based on the work budget and p2p work isn't
// collective"). The seed's PassSm fork pre-schedules p2p without a kernel before that loop,
// and the channels it uses add to the loads the collective channel picker reads (seed §2.a).
// A policy is one row of kPolicies: adding one is adding a row.
#include <span>
#include <string>
#include <string_view>

#include "engine/core/result.hpp"

namespace railcheck::plan {

enum class DrainOrder : std::uint8_t {
  CollFirst,  // NCCL: a plan takes collectives until the budget or the queue runs out
  P2pFirst,   // what NCCL's comment warns against: the cut point then depends on p2p work
};

struct SchedulePolicy {
  std::string_view name;
  DrainOrder order = DrainOrder::CollFirst;
  // p2p runs on copy engines before the plan loop (PassSm's preScheduleP2pUseNokernel): it
  // never enters a kernel plan, but its bytes count on its channels' loads.
  bool p2p_pre_scheduled = false;
  std::string_view summary;
};

std::span<const SchedulePolicy> all_policies();
Result<SchedulePolicy> policy_by_name(std::string_view name);
std::string policy_names();  // "nccl, passsm, p2p_first" for messages and --help

}  // namespace railcheck::plan
