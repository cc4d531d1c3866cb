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
#include <utility>
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

// ofi_rxm's protocol sizes as the plugin sets them (issue 42). rxm sends a message eagerly up
// to FI_OFI_RXM_BUFFER_SIZE (through bounce buffers on both sides), in segments up to
// FI_OFI_RXM_SAR_LIMIT (through the same bounce buffers), and by rendezvous above (the receiver
// reads straight from the sender's registered buffer: no copy, more turns). With
// HA_NCCL_RXM_EAGER_BYTES = N the plugin sets both to N: above the eager size every message
// goes by rendezvous, none by SAR (measured on 2xH100: the best of the variants at every size,
// docs/benchmarks.md 2026-11-28). A variable the environment already sets is left alone, as
// aws-ofi-nccl leaves its provider's. Staged sends (HA_NCCL_STAGE_BYTES) are then capped at the
// SAR limit in force: a send up to it completes in rxm once its bytes are in the socket, so a
// staged copy lets it complete before the delivery ack; a rendezvous send completes only after
// the receiver has read it, where the copy buys little.
struct RxmSizes {
  std::vector<std::pair<std::string, std::string>> set;  // variables to set before libfabric starts
  std::uint32_t staged_bytes = 0;                        // HA_NCCL_STAGE_BYTES as it applies
  std::string note;                                      // what is in force, for the log
};
constexpr std::uint32_t kRxmDefaultSarLimit = 131072;  // libfabric 1.17 prov/rxm: 8 x 16 KiB
// FI_OFI_RXM_MSG_RX_SIZE as the plugin sets it unless the environment does: the receive buffers
// rxm posts on each of its connections. rxm's default (128) grows each endpoint's bounce-buffer
// pool to several 17 MB chunks, and the plugin opens an rxm endpoint per rail of every comm (two
// per connection with the standby): 9.0 GB peak for three ranks on threads with four channels
// each way, 3.7 GB at 32, every harness case passing down to 16 (measured 2026-11-28). NCCL keeps
// at most NCCL_NET_MAX_REQUESTS (32) requests in flight per comm; an unexpected message beyond
// the posted buffers takes a fresh one from the pool (rxm replaces it), so fewer never blocks.
constexpr std::uint32_t kRxmMsgRxSize = 32;
RxmSizes rxm_sizes(const PluginConfig& c, const EnvLookup& lookup);

// Names of the process environment's HA_NCCL_* variables (from environ).
std::vector<std::string> ha_variable_names();

}  // namespace railcheck::nccl
