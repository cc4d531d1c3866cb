#pragma once
// Budget inputs from what a driver already has: a NIC preset or the HA tunables. Here in
// models/, not engine/budget: the engine never sees a preset, only the caps drawn from it.
#include "engine/budget/comm_budget.hpp"
#include "engine/failover/ha_tunables.hpp"
#include "models/nic_preset.hpp"

namespace railcheck::budget {

// max_cq stays 0 (not checked): no preset carries it.
BudgetCaps caps_from_preset(const NicPreset& nic);

// channels, wr_per_conn and max_recvs from the tunables (HA_NCCL_EXPECTED_CHANNELS,
// HA_NCCL_WR_PER_CONN, HA_NCCL_MAX_RECVS); everything else keeps BudgetUsage's defaults.
BudgetUsage usage_from_tunables(const HaTunables& t, std::uint32_t paths);

}  // namespace railcheck::budget
