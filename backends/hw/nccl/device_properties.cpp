#include "backends/hw/nccl/device_properties.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "backends/hw/nccl/net_abi.hpp"
#include "models/preset_caps.hpp"
#include "models/nic_preset.hpp"

namespace railcheck::nccl {

Result<DeviceProperties> device_properties(const PluginConfig& config, const ProviderFacts& facts, int group) {
  if (group < 0 || static_cast<std::uint32_t>(group) >= config.rail_groups)
    return Error{fmt::format("network device {} does not exist", group),
                 fmt::format("devices() reports {} (HA_NCCL_RAIL_GROUPS)", config.rail_groups)};
  DeviceProperties p;
  p.name = fmt::format("railcheck{}", group);
  p.pci_path = facts.pci_path;
  p.guid = static_cast<std::uint64_t>(group) + 1;
  p.ptr_support = nccl_abi::kPtrHost;
  if (config.speed_mbps > 0) {
    p.speed_mbps = static_cast<int>(config.speed_mbps);
    p.speed_source = "HA_NCCL_SPEED_MBPS";
  } else if (facts.link_mbps > 0) {
    p.speed_mbps = static_cast<int>(std::min<std::uint64_t>(facts.link_mbps, std::numeric_limits<int>::max()));
    p.speed_source = "link";
  } else {
    p.speed_mbps = static_cast<int>(kFallbackSpeedMbps);
    p.speed_source = "fallback: no link speed known";
  }
  p.latency_us = static_cast<float>(config.latency_us);

  budget::BudgetCaps caps = facts.caps;
  budget::BudgetUsage usage = budget::usage_from_tunables(config.engine, config.rails_per_group);
  if (!config.nic_preset.empty()) {
    // The operator names the hardware whose limits apply (e.g. the real NIC behind efa).
    caps = budget::caps_from_preset(*find_nic_preset(config.nic_preset));
  } else {
    // FabricConnection opens a CQ per rail endpoint, so CQ depth is per comm and path.
    usage.cq_layout = budget::CqLayout::PerComm;
  }
  auto b = budget::compute_budget(caps, usage);
  if (!b) return Error{fmt::format("maxComms budget for {}: {}", p.name, b.error().what), b.error().hint};
  if (b->max_comms == 0) {
    std::string hint = "lower HA_NCCL_EXPECTED_CHANNELS, HA_NCCL_WR_PER_CONN or HA_NCCL_MAX_RECVS";
    // net's queue depth is FI_NET_TX_SIZE, read once when libfabric starts: the plugin's setting
    // (kNetQueueDepth) comes too late in a process that started libfabric before NCCL loaded it.
    if (config.provider == "net" && b->binding == budget::BudgetResource::QpWr)
      hint += fmt::format("; or set FI_NET_TX_SIZE and FI_NET_RX_SIZE (the plugin asks for {}) before the process "
                          "first uses libfabric: this one has {} ({})",
                          kNetQueueDepth, caps.max_qp_wr, caps.source);
    return Error{fmt::format("maxComms budget for {} is 0 ({} binds)", p.name, budget::resource_name(b->binding)),
                 hint};
  }
  p.max_comms = static_cast<int>(std::min<std::uint64_t>(b->max_comms, std::numeric_limits<int>::max()));
  p.max_recvs = static_cast<int>(b->max_recvs);
  p.budget = std::move(b).value();
  p.limits_source = caps.source;
  return p;
}

std::string describe(const DeviceProperties& p) {
  return fmt::format(
      "{}: pciPath {}, speed {} Mb/s ({}), ptrSupport host, maxComms {} ({} binds; limits of {}), "
      "maxRecvs {}",
      p.name, p.pci_path.value_or("none (virtual NIC)"), p.speed_mbps, p.speed_source, p.max_comms,
      budget::resource_name(p.budget.binding), p.limits_source, p.max_recvs);
}

}  // namespace railcheck::nccl
