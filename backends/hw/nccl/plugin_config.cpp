#include "backends/hw/nccl/plugin_config.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include "models/nic_preset.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not declared by <cstdlib>

namespace railcheck::nccl {
namespace {

constexpr std::array kTable = {
    PluginSettingInfo{"HA_NCCL_PROVIDER", "name", "tcp;ofi_rxm", 0, 0,
                      "libfabric provider of every rail: efa, tcp;ofi_rxm, shm"},
    PluginSettingInfo{"HA_NCCL_RAIL_GROUPS", "count", "1", 1, 16,
                      "rail groups; NCCL sees each as one network device (devices())"},
    PluginSettingInfo{"HA_NCCL_RAILS_PER_GROUP", "count", "2", 1, 4,
                      "paths per connection: the primary plus standbys (1 = no failover)"},
    PluginSettingInfo{"HA_NCCL_SPEED_MBPS", "Mb/s", "0", 0, 1e7,
                      "speed getProperties reports; 0 = the provider's link speed, else sysfs"},
    PluginSettingInfo{"HA_NCCL_LATENCY_US", "us", "0", 0, 1e6, "latency getProperties reports; 0 = NCCL's default"},
    PluginSettingInfo{"HA_NCCL_NIC_PRESET", "name", "", 0, 0,
                      "NIC preset whose QP/CQE limits feed maxComms when the provider reports none"},
    PluginSettingInfo{"HA_NCCL_RAIL_ADDRS", "list", "", 0, 0,
                      "comma-separated IPv4 bind addresses: 1, one per rail, or one per rail of every group"},
    PluginSettingInfo{"HA_NCCL_MAX_REQUESTS", "count", "32", 1, 32,
                      "outstanding requests per comm (NCCL_NET_MAX_REQUESTS is 32); more wait"},
    PluginSettingInfo{"HA_NCCL_STAGE_BYTES", "bytes", "131072", 0, 4194304,
                      "sends up to this size complete once their bytes left, from a copy kept for replay until "
                      "acknowledged (providers with delivery acks: tcp;ofi_rxm; at most ofi_rxm's SAR limit in force); "
                      "0 = every send waits for its ack"},
    PluginSettingInfo{"HA_NCCL_RXM_EAGER_BYTES", "bytes", "0", 0, 1048576,
                      "on ofi_rxm: its eager size and its SAR limit (FI_OFI_RXM_BUFFER_SIZE, FI_OFI_RXM_SAR_LIMIT, "
                      "set before libfabric starts unless the environment sets them): larger messages go by "
                      "zero-copy rendezvous, and staged sends stop at this size. 65536 was the fastest setting "
                      "measured (2xH100, issue 42), at 4x ofi_rxm's receive-buffer memory; 0 = ofi_rxm's own sizes "
                      "(16 KiB eager, 128 KiB SAR)"},
    PluginSettingInfo{"HA_NCCL_STREAMS", "count", "1", 1, 3,
                      "connections (streams) per comm, each a whole HA connection; a message above "
                      "HA_NCCL_STRIPE_BYTES is cut across them, the tails moved by a thread per comm, as NCCL's "
                      "Socket stripes over NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS sockets. 1 = Socket's "
                      "own choice on hosts whose NIC has no cloud vendor id (one socket, no helper thread); at "
                      "most 3: NCCL's 128-byte handle holds three connection handles. The listener's value is used"},
    PluginSettingInfo{"HA_NCCL_STRIPE_BYTES", "bytes", "65536", 4096, 16777216,
                      "with several streams, messages above this size are cut across them (NCCL_SOCKET_MIN_TASKSIZE's "
                      "default); smaller ones use stream 0 alone. The listener's value is used"},
    PluginSettingInfo{"HA_NCCL_PROGRESS_US", "us", "1000", 0, 1000000,
                      "a background thread progresses every comm NCCL has not called for this long that owes a "
                      "staged send its ack (or its replay); 0 = no thread (then no staging either)"},
};

const PluginSettingInfo* find_setting(std::string_view env) {
  for (const auto& row : kTable)
    if (row.env == env) return &row;
  return nullptr;
}

Result<double> parse_number(const PluginSettingInfo& row, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  const std::string range = fmt::format("expected {} .. {} {}", row.min, row.max, row.unit);
  if (value.empty() || end == nullptr || *end != '\0')
    return Error{fmt::format("{}={}: not a number", row.env, value), range};
  if (!(v >= row.min && v <= row.max)) return Error{fmt::format("{}={}: out of range", row.env, value), range};
  if ((row.unit == std::string_view{"count"} || row.unit == std::string_view{"bytes"}) && v != std::floor(v))
    return Error{fmt::format("{}={}: must be a whole number", row.env, value), range};
  return v;
}

Result<bool> apply_setting(PluginConfig& c, const PluginSettingInfo& row, const std::string& value) {
  if (row.env == std::string_view{"HA_NCCL_PROVIDER"}) {
    if (value.empty()) return Error{"HA_NCCL_PROVIDER is empty", "name a libfabric provider: efa, tcp;ofi_rxm, shm"};
    c.provider = value;
    return true;
  }
  if (row.env == std::string_view{"HA_NCCL_NIC_PRESET"}) {
    if (!find_nic_preset(value)) {
      std::string names;
      for (const auto& p : nic_presets()) names += fmt::format("{}{}", names.empty() ? "" : ", ", p.name);
      return Error{fmt::format("HA_NCCL_NIC_PRESET={}: unknown NIC preset", value), "one of " + names};
    }
    c.nic_preset = value;
    return true;
  }
  if (row.env == std::string_view{"HA_NCCL_RAIL_ADDRS"}) {
    c.rail_addresses.clear();
    std::string_view rest = value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string addr(rest.substr(0, comma));
      in_addr parsed{};
      if (::inet_pton(AF_INET, addr.c_str(), &parsed) != 1)
        return Error{fmt::format("HA_NCCL_RAIL_ADDRS={}: '{}' is not an IPv4 address", value, addr),
                     "list addresses such as 127.0.0.1,169.254.1.1"};
      c.rail_addresses.push_back(addr);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    return true;
  }
  auto v = parse_number(row, value);
  if (!v) return v.error();
  const auto u32 = static_cast<std::uint32_t>(v.value());
  if (row.env == std::string_view{"HA_NCCL_RAIL_GROUPS"})
    c.rail_groups = u32;
  else if (row.env == std::string_view{"HA_NCCL_RAILS_PER_GROUP"})
    c.rails_per_group = u32;
  else if (row.env == std::string_view{"HA_NCCL_SPEED_MBPS"})
    c.speed_mbps = u32;
  else if (row.env == std::string_view{"HA_NCCL_LATENCY_US"})
    c.latency_us = v.value();
  else if (row.env == std::string_view{"HA_NCCL_MAX_REQUESTS"})
    c.max_requests = u32;
  else if (row.env == std::string_view{"HA_NCCL_STAGE_BYTES"})
    c.stage_bytes = u32;
  else if (row.env == std::string_view{"HA_NCCL_RXM_EAGER_BYTES"})
    c.rxm_eager_bytes = u32;
  else if (row.env == std::string_view{"HA_NCCL_STREAMS"})
    c.streams = u32;
  else if (row.env == std::string_view{"HA_NCCL_STRIPE_BYTES"})
    c.stripe_bytes = u32;
  else if (row.env == std::string_view{"HA_NCCL_PROGRESS_US"})
    c.progress_us = u32;
  return true;
}

}  // namespace

std::span<const PluginSettingInfo> plugin_setting_table() { return kTable; }

Result<PluginConfig> read_plugin_config(const EnvLookup& lookup, std::span<const std::string> names_present) {
  PluginConfig c;
  std::vector<std::string> engine_names;
  for (const auto& name : names_present) {
    const PluginSettingInfo* row = find_setting(name);
    if (row == nullptr) {
      engine_names.push_back(name);  // the engine's table, which rejects names it does not know
      continue;
    }
    const char* raw = lookup(name.c_str());
    if (raw == nullptr) continue;
    auto applied = apply_setting(c, *row, raw);
    if (!applied) return applied.error();
  }
  auto engine = apply_environment(c.engine, lookup, engine_names);
  if (!engine) return engine.error();
  const std::size_t n = c.rail_addresses.size();
  if (n > 1 && n != c.rails_per_group && n != std::size_t{c.rails_per_group} * c.rail_groups)
    return Error{fmt::format("HA_NCCL_RAIL_ADDRS has {} addresses for {} groups of {} rails", n, c.rail_groups,
                             c.rails_per_group),
                 fmt::format("give 1, {} or {} addresses", c.rails_per_group, c.rails_per_group * c.rail_groups)};
  // One path means nothing to fail over to: say so instead of arming a standby that is not there.
  if (c.rails_per_group == 1) c.engine.enable_backup = false;
  return c;
}

std::vector<std::string> rail_addresses_of(const PluginConfig& c, std::uint32_t group) {
  const std::size_t n = c.rail_addresses.size();
  if (n == 0) return {};
  if (n == 1) return std::vector<std::string>(c.rails_per_group, c.rail_addresses[0]);
  if (n == c.rails_per_group) return c.rail_addresses;
  const auto first = c.rail_addresses.begin() + static_cast<std::ptrdiff_t>(group * c.rails_per_group);
  return {first, first + c.rails_per_group};
}

RxmSizes rxm_sizes(const PluginConfig& c, const EnvLookup& lookup) {
  RxmSizes out;
  out.staged_bytes = c.stage_bytes;
  if (c.provider.find("ofi_rxm") == std::string::npos) return out;
  std::vector<std::string> notes;
  std::uint32_t sar_limit = kRxmDefaultSarLimit;
  for (const char* var : {"FI_OFI_RXM_BUFFER_SIZE", "FI_OFI_RXM_SAR_LIMIT"}) {
    const bool sar = std::string_view{var} == "FI_OFI_RXM_SAR_LIMIT";
    if (const char* user = lookup(var); user != nullptr) {
      notes.push_back(fmt::format("{}={} (from the environment)", var, user));
      if (sar) sar_limit = static_cast<std::uint32_t>(std::strtoul(user, nullptr, 10));
    } else if (c.rxm_eager_bytes > 0) {
      out.set.emplace_back(var, std::to_string(c.rxm_eager_bytes));
      notes.push_back(fmt::format("{}={} (HA_NCCL_RXM_EAGER_BYTES)", var, c.rxm_eager_bytes));
      if (sar) sar_limit = c.rxm_eager_bytes;
    } else {
      notes.push_back(fmt::format("{} unset (ofi_rxm's default)", var));
    }
  }
  if (const char* user = lookup("FI_OFI_RXM_MSG_RX_SIZE"); user != nullptr) {
    notes.push_back(fmt::format("FI_OFI_RXM_MSG_RX_SIZE={} (from the environment)", user));
  } else {
    out.set.emplace_back("FI_OFI_RXM_MSG_RX_SIZE", std::to_string(kRxmMsgRxSize));
    notes.push_back(fmt::format("FI_OFI_RXM_MSG_RX_SIZE={} (the plugin's: memory per rail)", kRxmMsgRxSize));
  }
  out.staged_bytes = std::min(c.stage_bytes, sar_limit);
  out.note = fmt::format("{}; staged sends up to {} B", fmt::join(notes, ", "), out.staged_bytes);
  return out;
}

std::vector<std::string> ha_variable_names() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.rfind("HA_NCCL_", 0) != 0) continue;
    out.emplace_back(entry.substr(0, entry.find('=')));
  }
  return out;
}

}  // namespace railcheck::nccl
