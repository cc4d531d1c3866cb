#pragma once
// The plugin's configuration, read once from the environment when NCCL first calls init().
//
// Two tables, one home each:
//   * the HA connection's tunables (HA_NCCL_RTO_MS, HA_NCCL_QP_TIMEOUT, HA_NCCL_MAX_RECVS, ...)
//     are RAILCHECK_HA_TUNABLES (engine/failover/ha_tunables.hpp), applied by apply_environment();
//   * the settings only the plugin has (which provider, how many rail groups NCCL sees as
//     devices, what getProperties reports) are RAILCHECK_PLUGIN_SETTINGS below.
// Every HA_NCCL_* variable must belong to one of them: an unknown name is an error, so a typo
// never leaves a default silently in force. docs/nccl-plugin.md lists both tables.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/hw/libfabric/provider_query.hpp"
#include "engine/core/result.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck::nccl {

// Every plugin-only setting, one line each: X(env, type, field, default, parse, unit, min, max, help).
//   env      the variable (also the row's name in docs/nccl-plugin.md)
//   field    the PluginConfig member, declared from this line with `default`
//   parse    how its text is read: `number` (range-checked; "count" and "bytes" whole), or a
//            setting's own reader (provider_name, nic_preset_name, ipv4_list) in plugin_config.cpp
//   min, max the inclusive range of a number
// The struct, plugin_setting_table() and read_plugin_config() all expand this list: adding a
// setting is one line here plus its test.
#define RAILCHECK_PLUGIN_SETTINGS(X)                                                                   \
  X(HA_NCCL_PROVIDER, std::string, provider, "auto", provider_name, "name", 0, 0,                      \
    "libfabric provider of every rail: efa, tcp;ofi_rxm, net, shm; auto = net where this libfabric "   \
    "has it (RDM over TCP without ofi_rxm), else tcp;ofi_rxm")                                         \
  X(HA_NCCL_RAIL_GROUPS, std::uint32_t, rail_groups, 1, number, "count", 1, 16,                        \
    "rail groups; NCCL sees each as one network device (devices())")                                   \
  X(HA_NCCL_RAILS_PER_GROUP, std::uint32_t, rails_per_group, 2, number, "count", 1, 4,                 \
    "paths per connection: the primary plus standbys (1 = no failover)")                               \
  X(HA_NCCL_SPEED_MBPS, std::uint32_t, speed_mbps, 0, number, "Mb/s", 0, 1e7,                          \
    "speed getProperties reports; 0 = the provider's link speed, else sysfs")                          \
  X(HA_NCCL_LATENCY_US, double, latency_us, 0, number, "us", 0, 1e6,                                   \
    "latency getProperties reports; 0 = NCCL's default")                                               \
  X(HA_NCCL_NIC_PRESET, std::string, nic_preset, "", nic_preset_name, "name", 0, 0,                    \
    "NIC preset whose QP/CQE limits feed maxComms when the provider reports none")                     \
  X(HA_NCCL_RAIL_ADDRS, std::vector<std::string>, rail_addresses, {}, ipv4_list, "list", 0, 0,         \
    "comma-separated IPv4 bind addresses: 1, one per rail, or one per rail of every group")            \
  X(HA_NCCL_MAX_REQUESTS, std::uint32_t, max_requests, 32, number, "count", 1, 32,                     \
    "outstanding requests per comm (NCCL_NET_MAX_REQUESTS is 32); more wait")                          \
  X(HA_NCCL_STAGE_BYTES, std::uint32_t, stage_bytes, 65536, number, "bytes", 0, 4194304,               \
    "sends up to this size complete once their bytes left, from a copy kept for replay until "         \
    "acknowledged (providers with delivery acks: tcp;ofi_rxm, net; at most rxm's SAR limit in force); " \
    "0 = every send waits for its ack")                                                                \
  X(HA_NCCL_RXM_EAGER_BYTES, std::uint32_t, rxm_eager_bytes, 0, number, "bytes", 0, 1048576,           \
    "on ofi_rxm: its eager size and its SAR limit (FI_OFI_RXM_BUFFER_SIZE, FI_OFI_RXM_SAR_LIMIT, "     \
    "set before libfabric starts unless the environment sets them): larger messages go by "            \
    "zero-copy rendezvous, and staged sends stop at this size. 65536 was the fastest setting "         \
    "measured (2xH100, issue 42), at 4x ofi_rxm's receive-buffer memory; 0 = ofi_rxm's own sizes "     \
    "(16 KiB eager, 128 KiB SAR)")                                                                     \
  X(HA_NCCL_STREAMS, std::uint32_t, streams, 1, number, "count", 1, 3,                                 \
    "connections (streams) per comm, each a whole HA connection; a message above "                     \
    "HA_NCCL_STRIPE_BYTES is cut across them, the tails moved by a thread per comm, as NCCL's "        \
    "Socket stripes over NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS sockets. 1 = Socket's "          \
    "own choice on hosts whose NIC has no cloud vendor id (one socket, no helper thread); at "         \
    "most 3: NCCL's 128-byte handle holds three connection handles. The listener's value is used")     \
  X(HA_NCCL_STRIPE_BYTES, std::size_t, stripe_bytes, 65536, number, "bytes", 4096, 16777216,           \
    "with several streams, messages above this size are cut across them (NCCL_SOCKET_MIN_TASKSIZE's "  \
    "default); smaller ones use stream 0 alone. The listener's value is used")                         \
  X(HA_NCCL_OPTIONAL_RECV_COMPLETION, std::string, optional_recv_completion, "auto", hint_mode, "name", 0, \
    0,                                                                                                 \
    "NCCL's hint on LL/LL128 receives: honour (test reports done at once, the GPU watches the "       \
    "data), decline (the receive completes normally), auto = honour only where the provider moves "    \
    "data with no call from the plugin (none of tcp, net, tcp;ofi_rxm, shm: a message that arrives "   \
    "after NCCL's one test would wait for the background thread, about 1 ms on net)")                  \
  X(HA_NCCL_PROGRESS_US, std::uint32_t, progress_us, 1000, number, "us", 0, 1000000,                   \
    "a background thread progresses every comm NCCL has not called for this long that owes a "         \
    "staged send its ack (or its replay); 0 = no thread (then no staging either)")

struct PluginConfig {
#define RAILCHECK_PLUGIN_FIELD(env, type, field, value, ...) type field = value;
  RAILCHECK_PLUGIN_SETTINGS(RAILCHECK_PLUGIN_FIELD)
#undef RAILCHECK_PLUGIN_FIELD
  HaTunables engine;  // the engine's HA_NCCL_* table (RAILCHECK_HA_TUNABLES)
};

// One row per plugin-only setting (the engine's rows are tunable_table()), in
// RAILCHECK_PLUGIN_SETTINGS' order.
struct PluginSettingInfo {
  std::string_view env;
  std::string_view unit;  // "name", "list", "count", "bytes", "Mb/s", "us"
  double min;             // inclusive range (numbers only)
  double max;
  std::string_view help;
};
std::span<const PluginSettingInfo> plugin_setting_table();
// A setting's default as text ("" for none), from PluginConfig{}: docs/nccl-plugin.md's column.
std::string plugin_setting_default(std::string_view env);

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
// FI_OFI_RXM_MSG_RX_SIZE as the plugin sets it unless the environment does (provider_query.hpp
// says why 32).
using fabric::kRxmMsgRxSize;
// FI_NET_TX_SIZE and FI_NET_RX_SIZE as the plugin sets them for the "net" provider (libfabric
// 1.17's tcp fork with RDM endpoints of its own) unless the environment does: its default of 256
// entries is below one comm's deepest queue (HA_NCCL_WR_PER_CONN x HA_NCCL_MAX_RECVS = 512 at the
// defaults), so the maxComms budget (max_qp_wr) would admit no comm. An entry is a transfer
// descriptor taken from a pool as it is used, not a buffer: a deeper queue costs nothing unused.
constexpr std::uint32_t kNetQueueDepth = 4096;
// And FI_NET_MAX_SAVED=0: net then acknowledges a message only once a posted receive holds it
// (fabric::send_completion_is_local says why). The backend acknowledges deliveries itself on net
// all the same, coalesced and after staged sends (fabric::backend_acks_by_default: faster); the
// setting keeps RAILCHECK_FABRIC_DELIVERY_ACKS=0, net's own acks alone, correct.
// The provider variables the plugin sets before libfabric starts: ofi_rxm's sizes (above), or the
// net provider's queue depths.
RxmSizes rxm_sizes(const PluginConfig& c, const EnvLookup& lookup);

// HA_NCCL_PROVIDER=auto, the default: net where this libfabric has it, else tcp;ofi_rxm. net is
// the faster TCP path at every size measured and holds a tenth of rxm's buffer memory
// (docs/nccl-plugin.md, "The net provider"); libfabric 1.17 (Debian 12) ships it, later releases
// fold its code into tcp and drop the name, where auto takes tcp;ofi_rxm. Each process resolves on
// its own, so every rank of a job needs the same libfabric (or HA_NCCL_PROVIDER set explicitly):
// a net endpoint cannot talk to an rxm one.
constexpr std::string_view kAutoProvider = "auto";
constexpr std::string_view kAutoPreferred = "net";
constexpr std::string_view kAutoFallback = "tcp;ofi_rxm";
struct ProviderChoice {
  std::string provider;  // the provider every rail opens
  std::string why;       // for the log
};
// `available` says whether this libfabric offers a provider (the plugin asks fi_getinfo); any
// name but auto is taken as given.
ProviderChoice resolve_provider(const std::string& requested, const std::function<bool(const std::string&)>& available);
// The variables to set before libfabric starts for a configuration whose provider may still be
// auto (then both candidates' variables: libfabric reads each provider's once, when it starts,
// which is the first query of `available`).
std::vector<std::pair<std::string, std::string>> provider_variables(const PluginConfig& c, const EnvLookup& lookup);

// Names of the process environment's HA_NCCL_* variables (from environ).
std::vector<std::string> ha_variable_names();

}  // namespace railcheck::nccl
