// The policy table (schedule_policy.hpp).
#include "engine/plan/schedule_policy.hpp"

#include <fmt/format.h>

#include <array>

namespace railcheck::plan {
namespace {

constexpr std::array<SchedulePolicy, 3> kPolicies = {{
    {"nccl", DrainOrder::CollFirst, false, "collectives first, p2p once none is left (NCCL ncclLaunchPrepare)"},
    {"passsm", DrainOrder::CollFirst, true, "p2p pre-scheduled without a kernel before the plans (seed's PassSm)"},
    {"p2p_first", DrainOrder::P2pFirst, false, "p2p drained into plans before collectives (NCCL's warning)"},
}};

}  // namespace

std::span<const SchedulePolicy> all_policies() { return kPolicies; }

std::string policy_names() {
  std::string out;
  for (const auto& p : kPolicies) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

Result<SchedulePolicy> policy_by_name(std::string_view name) {
  for (const auto& p : kPolicies)
    if (p.name == name) return p;
  return Error{fmt::format("unknown scheduling policy '{}'", name), "one of: " + policy_names()};
}

}  // namespace railcheck::plan
