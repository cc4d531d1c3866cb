#pragma once
// What the RDMA devices of this host are and can do: ibv_get_device_list, ibv_query_device,
// ibv_query_port and the GID table. With no device this is the error "no RDMA device found"
// and callers exit with kExitSkipped: a result is never invented.
#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/verbs/gid_choice.hpp"
#include "engine/budget/comm_budget.hpp"
#include "engine/core/result.hpp"
#include "models/nic_preset.hpp"

namespace railcheck::hw::verbs {

// The automake/CTest convention for "skipped": no device to run on here.
constexpr int kExitSkipped = 77;
constexpr const char* kNoDeviceMessage = "no RDMA device found";

struct DeviceCaps {
  std::uint64_t max_qp = 0, max_cq = 0, max_cqe = 0, max_qp_wr = 0, max_sge = 0, max_mr = 0;
  std::uint64_t max_mr_size = 0;
  std::uint32_t max_qp_rd_atom = 0;
};

struct PortInfo {
  std::uint8_t port_num = 1;
  bool active = false;
  bool ethernet = false;  // link layer Ethernet: RoCE
  ibv_mtu active_mtu = IBV_MTU_1024;
  std::uint16_t lid = 0;
  double gbps = 0;
  bool auto_migration_supported = false;  // IBV_PORT_AUTO_MIGR_SUP: the HCA could do APM
  std::optional<GidEntry> gid;            // the entry choose_gid() picked
};

struct VerbsDevice {
  std::string name;  // "mlx5_0"
  std::string node_guid;
  DeviceCaps caps;
  std::vector<PortInfo> ports;
};

Result<std::vector<VerbsDevice>> probe_verbs();

// Port speed from ibv_port_attr's active_speed (per-lane encoding) and active_width (lane
// encoding), in Gb/s of data per direction; 0 for an encoding this table does not know.
double port_gbps(std::uint8_t active_speed, std::uint8_t active_width);
std::uint32_t mtu_bytes(ibv_mtu m);

// The device's limits in the shapes the rest of railcheck uses.
NicPreset to_nic_preset(const VerbsDevice& d);
budget::BudgetCaps to_budget_caps(const VerbsDevice& d);

}  // namespace railcheck::hw::verbs
