#pragma once
// The plugin's configuration, read once from the environment when NCCL first calls init().
//
// Two tables, one home each:
//   * the HA connection's tunables (HA_NCCL_RTO_MS, HA_NCCL_QP_TIMEOUT, HA_NCCL_MAX_RECVS, ...)
//     live in engine/failover/ha_tunables.cpp and are applied by apply_environment();
//   * the settings only the plugin has (which provider, how many rail groups NCCL sees as
//     devices, what getProperties reports) live in plugin_setting_table() below.
// Every HA_NCCL_* variable must belong to one of them: an unknown name is an error, so a typo
// never leaves a default silently in force. docs/nccl-plugin.md lists both tables.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck::nccl {

struct PluginConfig {
  std::string provider = "tcp;ofi_rxm";     // HA_NCCL_PROVIDER: libfabric provider of every rail
  std::uint32_t rail_groups = 1;            // HA_NCCL_RAIL_GROUPS: devices() reports this many
  std::uint32_t rails_per_group = 2;        // HA_NCCL_RAILS_PER_GROUP: primary + standbys per connection
  std::uint32_t speed_mbps = 0;             // HA_NCCL_SPEED_MBPS: 0 = from the provider / sysfs
  double latency_us = 0;                    // HA_NCCL_LATENCY_US: 0 = let NCCL use its default
  std::string nic_preset;                   // HA_NCCL_NIC_PRESET: device limits for the maxComms budget
  std::uint32_t max_requests = 32;          // HA_NCCL_MAX_REQUESTS: outstanding requests per comm
  std::uint32_t stage_bytes = 131072;       // HA_NCCL_STAGE_BYTES: staged sends up to this size (0 = off)
  std::uint32_t progress_us = 1000;         // HA_NCCL_PROGRESS_US: background progress period (0 = off)
  std::uint32_t rxm_eager_bytes = 0;        // HA_NCCL_RXM_EAGER_BYTES: FI_OFI_RXM_BUFFER_SIZE (0 = rxm's)
  std::uint32_t streams = 1;                // HA_NCCL_STREAMS: connections per comm a large message is cut across
  std::size_t stripe_bytes = 65536;         // HA_NCCL_STRIPE_BYTES: messages above this size are cut
  std::vector<std::string> rail_addresses;  // HA_NCCL_RAIL_ADDRS: bind address per rail; empty = provider's
  HaTunables engine;                        // the engine's HA_NCCL_* table
};

// One row per plugin-only setting (the engine's rows are tunable_table()).
struct PluginSettingInfo {
  std::string_view env;
  std::string_view unit;      // "name", "count", "bytes", "Mb/s", "us"
  std::string_view fallback;  // the default, as text
  double min;                 // inclusive range (numbers only)
  double max;
  std::string_view help;
};
std::span<const PluginSettingInfo> plugin_setting_table();

// Reads every HA_NCCL_* variable in `names_present` through `lookup` (getenv in the plugin, a
// map in tests). Errors name the variable, its value and the accepted range.
Result<PluginConfig> read_plugin_config(const EnvLookup& lookup, std::span<const std::string> names_present);

// The bind addresses of one group's rails (FabricOptions::rail_addresses): HA_NCCL_RAIL_ADDRS
// holds one address for every rail, one per rail of a group (shared by all groups), or one per
// rail of every group, group 0 first.
std::vector<std::string> rail_addresses_of(const PluginConfig& c, std::uint32_t group);

// Names of the process environment's HA_NCCL_* variables (from environ).
std::vector<std::string> ha_variable_names();

}  // namespace railcheck::nccl
