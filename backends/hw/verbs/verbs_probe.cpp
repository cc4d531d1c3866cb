#include "backends/hw/verbs/verbs_probe.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace railcheck::hw::verbs {

double port_gbps(std::uint8_t active_speed, std::uint8_t active_width) {
  double lane = 0;
  switch (active_speed) {
    case 1: lane = 2.5; break;    // SDR
    case 2: lane = 5; break;      // DDR
    case 4: lane = 10; break;     // QDR
    case 8: lane = 10; break;     // FDR10
    case 16: lane = 14; break;    // FDR
    case 32: lane = 25; break;    // EDR
    case 64: lane = 50; break;    // HDR
    case 128: lane = 100; break;  // NDR
    default: return 0;
  }
  int lanes = 0;
  switch (active_width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return 0;
  }
  return lane * lanes;
}

std::uint32_t mtu_bytes(ibv_mtu m) {
  return 128u << static_cast<int>(m);  // IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5
}

namespace {

struct DeviceList {
  ibv_device** list = nullptr;
  ~DeviceList() {
    if (list) ibv_free_device_list(list);
  }
};
struct Context {
  ibv_context* ctx = nullptr;
  ~Context() {
    if (ctx) ibv_close_device(ctx);
  }
};

GidType gid_type_of(std::uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_ROCE_V1: return GidType::RoceV1;
    case IBV_GID_TYPE_ROCE_V2: return GidType::RoceV2;
    default: return GidType::Ib;
  }
}

Result<PortInfo> probe_port(ibv_context* ctx, const std::string& dev, std::uint8_t port) {
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(ctx, port, &pa); rc != 0)
    return Error{fmt::format("ibv_query_port({}, port {}) failed: {}", dev, port, std::strerror(rc)), ""};
  PortInfo p;
  p.port_num = port;
  p.active = pa.state == IBV_PORT_ACTIVE;
  p.ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
  p.active_mtu = pa.active_mtu;
  p.lid = pa.lid;
  p.gbps = port_gbps(pa.active_speed, pa.active_width);
  p.auto_migration_supported = (pa.port_cap_flags & IBV_PORT_AUTO_MIGR_SUP) != 0;
  std::vector<GidEntry> table;
  for (int i = 0; i < pa.gid_tbl_len; ++i) {
    ibv_gid_entry e{};
    // Entries the kernel has not filled fail with ENODATA: skip them, they are not errors.
    if (ibv_query_gid_ex(ctx, port, static_cast<std::uint32_t>(i), &e, 0) != 0) continue;
    GidEntry g;
    g.index = e.gid_index;
    std::memcpy(g.gid.data(), e.gid.raw, g.gid.size());
    g.type = gid_type_of(e.gid_type);
    table.push_back(g);
  }
  p.gid = choose_gid(table, p.ethernet);
  return p;
}

}  // namespace

Result<std::vector<VerbsDevice>> probe_verbs() {
  int n = 0;
  DeviceList devs;
  errno = 0;
  devs.list = ibv_get_device_list(&n);
  if (!devs.list || n == 0) {
    std::string why = devs.list ? "ibv_get_device_list returned 0 devices"
                                : fmt::format("ibv_get_device_list failed: {}", std::strerror(errno));
    return Error{kNoDeviceMessage, why + "; run where an RDMA NIC and its driver (mlx5_ib, efa, rxe) are present"};
  }
  std::vector<VerbsDevice> out;
  for (int i = 0; i < n; ++i) {
    VerbsDevice d;
    d.name = ibv_get_device_name(devs.list[i]);
    d.node_guid = fmt::format("{:016x}", be64toh(ibv_get_device_guid(devs.list[i])));
    Context c;
    c.ctx = ibv_open_device(devs.list[i]);
    if (!c.ctx) return Error{fmt::format("ibv_open_device({}) failed: {}", d.name, std::strerror(errno)), "check permissions on /dev/infiniband"};
    ibv_device_attr a{};
    if (int rc = ibv_query_device(c.ctx, &a); rc != 0)
      return Error{fmt::format("ibv_query_device({}) failed: {}", d.name, std::strerror(rc)), ""};
    d.caps = {static_cast<std::uint64_t>(a.max_qp),  static_cast<std::uint64_t>(a.max_cq),
              static_cast<std::uint64_t>(a.max_cqe), static_cast<std::uint64_t>(a.max_qp_wr),
              static_cast<std::uint64_t>(a.max_sge), static_cast<std::uint64_t>(a.max_mr),
              a.max_mr_size,                         static_cast<std::uint32_t>(a.max_qp_rd_atom)};
    for (std::uint8_t port = 1; port <= a.phys_port_cnt; ++port) {
      auto p = probe_port(c.ctx, d.name, port);
      if (!p) return p.error();
      d.ports.push_back(std::move(p).value());
    }
    out.push_back(std::move(d));
  }
  return out;
}

NicPreset to_nic_preset(const VerbsDevice& d) {
  NicPreset p;
  p.name = d.name;
  p.description = fmt::format("device {} (guid {}), limits read with ibv_query_device", d.name, d.node_guid);
  const PortInfo* port = nullptr;
  for (const auto& pi : d.ports)
    if (pi.active) {
      port = &pi;
      break;
    }
  if (port) {
    p.link_gbps = port->gbps;
    p.mtu = mtu_bytes(port->active_mtu);
  }
  p.max_qp = static_cast<std::uint32_t>(d.caps.max_qp);
  p.max_cqe = static_cast<std::uint32_t>(d.caps.max_cqe);
  p.max_qp_wr = static_cast<std::uint32_t>(d.caps.max_qp_wr);
  p.max_sge = static_cast<std::uint32_t>(d.caps.max_sge);
  p.ordered = true;  // RC QPs deliver in order
  return p;
}

budget::BudgetCaps to_budget_caps(const VerbsDevice& d) {
  budget::BudgetCaps c;
  c.max_qp = d.caps.max_qp;
  c.max_cqe = d.caps.max_cqe;
  c.max_qp_wr = d.caps.max_qp_wr;
  c.max_cq = d.caps.max_cq;
  c.source = "device " + d.name;
  return c;
}

}  // namespace railcheck::hw::verbs
