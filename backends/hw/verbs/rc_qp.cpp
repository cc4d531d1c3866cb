#include "backends/hw/verbs/rc_qp.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace railcheck::hw::verbs {

VerbsPort::~VerbsPort() {
  if (cq_) ibv_destroy_cq(cq_);
  if (pd_) ibv_dealloc_pd(pd_);
  if (ctx_) ibv_close_device(ctx_);
}

Result<std::unique_ptr<VerbsPort>> VerbsPort::open(const std::string& device, std::uint8_t port_num, const QpSizes& sizes) {
  auto devices = probe_verbs();
  if (!devices) return devices.error();
  const VerbsDevice* chosen = nullptr;
  const PortInfo* chosen_port = nullptr;
  for (const auto& d : devices.value()) {
    if (!device.empty() && d.name != device) continue;
    for (const auto& p : d.ports)
      if (p.port_num == port_num && p.active && p.gid) {
        chosen = &d;
        chosen_port = &p;
        break;
      }
    if (chosen) break;
  }
  if (!chosen)
    return Error{fmt::format("no active port {} with a usable GID on {}", port_num, device.empty() ? "any device" : device),
                 "check `ibv_devinfo -v`: the port must be PORT_ACTIVE"};
  std::unique_ptr<VerbsPort> vp(new VerbsPort());
  vp->name_ = chosen->name;
  vp->port_ = *chosen_port;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  for (int i = 0; list && i < n; ++i)
    if (vp->name_ == ibv_get_device_name(list[i])) vp->ctx_ = ibv_open_device(list[i]);
  if (list) ibv_free_device_list(list);
  if (!vp->ctx_) return Error{fmt::format("ibv_open_device({}) failed: {}", vp->name_, std::strerror(errno)), ""};
  vp->pd_ = ibv_alloc_pd(vp->ctx_);
  if (!vp->pd_) return Error{fmt::format("ibv_alloc_pd({}) failed: {}", vp->name_, std::strerror(errno)), ""};
  vp->cq_ = ibv_create_cq(vp->ctx_, static_cast<int>(sizes.cqe), nullptr, nullptr, 0);
  if (!vp->cq_)
    return Error{fmt::format("ibv_create_cq({}, {} entries) failed: {}", vp->name_, sizes.cqe, std::strerror(errno)),
                 "lower the CQ depth (HA_NCCL_WR_PER_CONN) or check max_cqe in `railcheck budget`"};
  return vp;
}

RcQp::~RcQp() {
  if (qp_) ibv_destroy_qp(qp_);
}

Result<std::unique_ptr<RcQp>> RcQp::create(VerbsPort& port, const QpSizes& sizes, std::uint32_t psn) {
  std::unique_ptr<RcQp> q(new RcQp(port, psn & kPsnMask));
  ibv_qp_init_attr init{};
  init.send_cq = port.cq();
  init.recv_cq = port.cq();
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = sizes.send_wr;
  init.cap.max_recv_wr = sizes.recv_wr;
  init.cap.max_send_sge = sizes.sge;
  init.cap.max_recv_sge = sizes.sge;
  init.sq_sig_all = 1;  // every WR completes: the in-flight table retires entries on completion
  q->qp_ = ibv_create_qp(port.pd(), &init);
  if (!q->qp_)
    return Error{fmt::format("ibv_create_qp(RC, {} send / {} recv WRs) on {} failed: {}", sizes.send_wr, sizes.recv_wr,
                             port.name(), std::strerror(errno)),
                 "the device may be out of QPs: see `railcheck budget` for maxComms"};
  return q;
}

Result<bool> RcQp::apply(const ModifyQp& m) {
  LocalPortContext ctx;
  ctx.port_num = port_.port().port_num;
  ctx.sgid_index = static_cast<std::uint8_t>(port_.port().gid ? port_.port().gid->index : 0);
  ctx.path_mtu = port_.port().active_mtu;
  ctx.ethernet = port_.port().ethernet;
  ctx.local_psn = psn_;
  auto t = qp_transition(state_, m, ctx);
  if (!t) return t.error();
  if (int rc = ibv_modify_qp(qp_, &t.value().attr, t.value().mask); rc != 0)
    return Error{fmt::format("ibv_modify_qp(qpn {}, {} -> {}, mask {:#x}) failed: {}", qp_->qp_num, to_string(state_),
                             to_string(m.target), t.value().mask, std::strerror(rc)),
                 ""};
  state_ = m.target;
  return true;
}

QpEndpoint RcQp::local_endpoint() const {
  QpEndpoint e;
  e.qpn = qp_->qp_num & kQpnMask;
  e.psn = psn_;
  e.lid = port_.port().lid;
  if (port_.port().gid) e.gid = port_.port().gid->gid;
  return e;
}

ConnectionHandle handle_for(const RcQp& qp, bool dual_path) {
  ConnectionHandle h;
  h.dual_path = dual_path;
  h.primary = qp.local_endpoint();
  return h;
}

}  // namespace railcheck::hw::verbs
