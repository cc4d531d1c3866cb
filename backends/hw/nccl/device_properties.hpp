#pragma once
// What getProperties reports for one rail group (one NCCL network device), from the
// configuration and the provider's facts. Version-neutral: the v8 and v11 entry points copy it
// into their own structs.
//
// Field by field (seed §3.1, §15.2, §16.3):
//   name        "railcheck<group>"; NCCL keys its topology's net nodes by name, so each group
//               gets its own.
//   pci_path    the NIC's PCI function from fi_nic or sysfs; none (NULL) for loopback and shm,
//               which NCCL 2.28 treats as a virtual NIC attached to the first CPU
//               (src/graph/xml.cc, ncclTopoFillNet).
//   guid        group index + 1: distinct per device, so NCCL never merges two groups as one
//               multi-function NIC.
//   ptr_support NCCL_PTR_HOST only: FabricConnection registers host memory; CUDA memory would
//               need FI_HMEM, which the backend does not ask for.
//   speed       HA_NCCL_SPEED_MBPS, else the provider's link speed, else 10 Gb/s, the same
//               fallback NCCL's Socket transport uses when sysfs has no speed.
//   max_comms   from engine/budget over the provider's limits (or HA_NCCL_NIC_PRESET's);
//   max_recvs   HA_NCCL_MAX_RECVS (grouped receive width).
#include <cstdint>
#include <optional>
#include <string>

#include "backends/hw/nccl/plugin_config.hpp"
#include "backends/hw/nccl/provider_facts.hpp"
#include "engine/budget/comm_budget.hpp"
#include "engine/core/result.hpp"

namespace railcheck::nccl {

constexpr std::uint32_t kFallbackSpeedMbps = 10'000;

struct DeviceProperties {
  std::string name;
  std::optional<std::string> pci_path;
  std::uint64_t guid = 0;
  int ptr_support = 0;
  int speed_mbps = 0;
  std::string speed_source;  // "HA_NCCL_SPEED_MBPS", "link", "fallback"
  int port = 0;
  float latency_us = 0;
  int max_comms = 0;
  int max_recvs = 0;
  budget::CommBudget budget;  // how max_comms came about, for the INFO log (seed §16.6)
  std::string limits_source;  // whose limits the budget divided
};

// Errors: group out of range, or a budget the inputs make impossible.
Result<DeviceProperties> device_properties(const PluginConfig& config, const ProviderFacts& facts, int group);

// One line for the INFO log: "railcheck0: 10000 Mb/s (fallback), maxComms 256 (cap; max_qp ...)".
std::string describe(const DeviceProperties& p);

}  // namespace railcheck::nccl
