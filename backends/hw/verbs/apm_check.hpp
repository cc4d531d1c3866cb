#pragma once
// Hardware APM (Automatic Path Migration) and this HA scheme must not both act on one failure
// (seed §16.5): APM migrates a QP to its alternate path inside the HCA, unseen by the engine,
// while the engine fails the connection over to a standby QP; both at once means two switches,
// retries timed against different clocks, and a replay onto a path the HCA already moved.
//
// What is true on Linux: APM is per QP. It acts only on a QP that was given an alternate path
// (IBV_QP_ALT_PATH) and armed (path_mig_state REARM). railcheck never sets either (see
// qp_transition.cpp), so its own QPs cannot migrate. The port capability
// IBV_PORT_AUTO_MIGR_SUP only says the HCA could. The seed's sysfs switch
// (/sys/class/infiniband/<dev>/ports/<n>/apm_enable) is not a kernel interface; where a vendor
// stack does provide it and it reads 1, we warn as the seed asks.
#include <filesystem>
#include <optional>
#include <string>

namespace railcheck::hw::verbs {

// A warning line to log at init, or nothing. `backup_enabled` is HA_NCCL_ENABLE_BACKUP.
std::optional<std::string> apm_warning(const std::filesystem::path& sysfs_root, const std::string& device,
                                       unsigned port, bool port_supports_apm, bool backup_enabled);

}  // namespace railcheck::hw::verbs
