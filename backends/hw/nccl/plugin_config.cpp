#include "backends/hw/nccl/plugin_config.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "models/nic_preset.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not declared by <cstdlib>

namespace railcheck::nccl {
namespace {

#define RAILCHECK_PLUGIN_ROW(env, type, field, value, parse, unit, min, max, help) \
  PluginSettingInfo{#env, unit, min, max, help},
constexpr std::array kTable = {RAILCHECK_PLUGIN_SETTINGS(RAILCHECK_PLUGIN_ROW)};
#undef RAILCHECK_PLUGIN_ROW

const PluginSettingInfo* find_setting(std::string_view env) {
  for (const auto& row : kTable)
    if (row.env == env) return &row;
  return nullptr;
}

// The readers a row's `parse` column names: each checks the text and sets the field.

template <class T>
Result<bool> number(const PluginSettingInfo& row, const std::string& value, T& field) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  const std::string range = fmt::format("expected {} .. {} {}", row.min, row.max, row.unit);
  if (value.empty() || end == nullptr || *end != '\0')
    return Error{fmt::format("{}={}: not a number", row.env, value), range};
  if (!(v >= row.min && v <= row.max)) return Error{fmt::format("{}={}: out of range", row.env, value), range};
  if ((row.unit == std::string_view{"count"} || row.unit == std::string_view{"bytes"}) && v != std::floor(v))
    return Error{fmt::format("{}={}: must be a whole number", row.env, value), range};
  field = static_cast<T>(v);  // in range, so the conversion is defined
  return true;
}

Result<bool> provider_name(const PluginSettingInfo& row, const std::string& value, std::string& field) {
  if (value.empty())
    return Error{fmt::format("{} is empty", row.env), "name a libfabric provider: efa, tcp;ofi_rxm, net, shm, or auto"};
  field = value;
  return true;
}

Result<bool> nic_preset_name(const PluginSettingInfo& row, const std::string& value, std::string& field) {
  if (!find_nic_preset(value)) {
    std::string names;
    for (const auto& p : nic_presets()) names += fmt::format("{}{}", names.empty() ? "" : ", ", p.name);
    return Error{fmt::format("{}={}: unknown NIC preset", row.env, value), "one of " + names};
  }
  field = value;
  return true;
}

Result<bool> hint_mode(const PluginSettingInfo& row, const std::string& value, std::string& field) {
  if (value != "auto" && value != "honour" && value != "decline")
    return Error{fmt::format("{}={}: unknown mode", row.env, value), "one of auto, honour, decline"};
  field = value;
  return true;
}

Result<bool> ipv4_list(const PluginSettingInfo& row, const std::string& value, std::vector<std::string>& field) {
  field.clear();
  std::string_view rest = value;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string addr(rest.substr(0, comma));
    in_addr parsed{};
    if (::inet_pton(AF_INET, addr.c_str(), &parsed) != 1)
      return Error{fmt::format("{}={}: '{}' is not an IPv4 address", row.env, value, addr),
                   "list addresses such as 127.0.0.1,169.254.1.1"};
    field.push_back(addr);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return true;
}

Result<bool> apply_setting(PluginConfig& c, const PluginSettingInfo& row, const std::string& value) {
#define RAILCHECK_PLUGIN_APPLY(env_, type, field, value_, parse, ...) \
  if (row.env == std::string_view{#env_}) return parse(row, value, c.field);
  RAILCHECK_PLUGIN_SETTINGS(RAILCHECK_PLUGIN_APPLY)
#undef RAILCHECK_PLUGIN_APPLY
  return Error{fmt::format("{}: no reader", row.env), ""};  // every row has one: the list above is the table
}

template <class T>
std::string as_text(const T& v) {
  if constexpr (std::is_same_v<T, std::vector<std::string>>)
    return fmt::format("{}", fmt::join(v, ","));
  else
    return fmt::format("{}", v);
}

}  // namespace

std::span<const PluginSettingInfo> plugin_setting_table() { return kTable; }

std::string plugin_setting_default(std::string_view env) {
  const PluginConfig defaults;
#define RAILCHECK_PLUGIN_DEFAULT(env_, type, field, ...) \
  if (env == std::string_view{#env_}) return as_text(defaults.field);
  RAILCHECK_PLUGIN_SETTINGS(RAILCHECK_PLUGIN_DEFAULT)
#undef RAILCHECK_PLUGIN_DEFAULT
  return "";
}

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
  if (c.provider == "net") {
    std::vector<std::string> notes;
    const std::pair<const char*, std::string> ours[] = {
        {"FI_NET_TX_SIZE", std::to_string(kNetQueueDepth)},
        {"FI_NET_RX_SIZE", std::to_string(kNetQueueDepth)},
        {"FI_NET_MAX_SAVED", "0"}};
    for (const auto& [var, value] : ours) {
      if (const char* user = lookup(var); user != nullptr) {
        notes.push_back(fmt::format("{}={} (from the environment)", var, user));
      } else {
        out.set.emplace_back(var, value);
        notes.push_back(fmt::format("{}={} (the plugin's)", var, value));
      }
    }
    out.note = fmt::format("{}; staged sends up to {} B", fmt::join(notes, ", "), out.staged_bytes);
    return out;
  }
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

ProviderChoice resolve_provider(const std::string& requested, const std::function<bool(const std::string&)>& available) {
  if (requested != kAutoProvider) return {requested, "HA_NCCL_PROVIDER"};
  const std::string preferred{kAutoPreferred};
  if (available(preferred))
    return {preferred, fmt::format("auto: this libfabric has {} (RDM over TCP without ofi_rxm)", preferred)};
  return {std::string{kAutoFallback}, fmt::format("auto: this libfabric has no {} provider", preferred)};
}

std::vector<std::pair<std::string, std::string>> provider_variables(const PluginConfig& c, const EnvLookup& lookup) {
  if (c.provider != kAutoProvider) return rxm_sizes(c, lookup).set;
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view candidate : {kAutoPreferred, kAutoFallback}) {
    PluginConfig one = c;
    one.provider = std::string{candidate};
    for (auto& v : rxm_sizes(one, lookup).set) out.push_back(std::move(v));
  }
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
