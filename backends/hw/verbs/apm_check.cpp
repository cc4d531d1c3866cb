#include "backends/hw/verbs/apm_check.hpp"

#include <fmt/format.h>

#include <fstream>

namespace railcheck::hw::verbs {

std::optional<std::string> apm_warning(const std::filesystem::path& sysfs_root, const std::string& device,
                                       unsigned port, bool port_supports_apm, bool backup_enabled) {
  if (!backup_enabled) return std::nullopt;  // no standby: nothing to conflict with
  auto knob = sysfs_root / "sys/class/infiniband" / device / "ports" / std::to_string(port) / "apm_enable";
  std::ifstream in(knob);
  int enabled = 0;
  if (in >> enabled && enabled != 0)
    return fmt::format(
        "{} port {}: hardware APM is enabled ({} = {}); it can migrate QPs underneath railcheck's failover. "
        "Disable it (echo 0 > {}) or set HA_NCCL_ENABLE_BACKUP=0",
        device, port, knob.string(), enabled, knob.string());
  if (port_supports_apm)
    return fmt::format(
        "{} port {}: the HCA supports APM (IBV_PORT_AUTO_MIGR_SUP); railcheck's QPs never load an alternate path, "
        "so they will not migrate, but other software on this port might",
        device, port);
  return std::nullopt;
}

}  // namespace railcheck::hw::verbs
