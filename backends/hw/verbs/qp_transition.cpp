#include "backends/hw/verbs/qp_transition.hpp"

#include <fmt/format.h>

#include <cstring>

namespace railcheck::hw::verbs {

ibv_qp_state to_ibv(QpState s) {
  switch (s) {
    case QpState::Reset: return IBV_QPS_RESET;
    case QpState::Init: return IBV_QPS_INIT;
    case QpState::Rtr: return IBV_QPS_RTR;
    case QpState::Rts: return IBV_QPS_RTS;
    case QpState::Sqd: return IBV_QPS_SQD;
    case QpState::Sqe: return IBV_QPS_SQE;
    case QpState::Err: return IBV_QPS_ERR;
  }
  return IBV_QPS_ERR;
}

namespace {

Error refused(QpState from, QpState to, std::string_view why) {
  return Error{fmt::format("ibv_modify_qp {} -> {} refused: {}", to_string(from), to_string(to), why),
               "the engine asked for a transition the IB QP state machine does not allow"};
}

// RTR: where the peer is and how our receive side behaves (rq_psn = the peer's first send PSN).
void fill_rtr(QpTransition& t, const QpEndpoint& remote, const QpReliability& rel, const LocalPortContext& port) {
  t.attr.path_mtu = port.path_mtu;
  t.attr.dest_qp_num = remote.qpn & kQpnMask;
  t.attr.rq_psn = remote.psn & kPsnMask;
  t.attr.max_dest_rd_atomic = 1;  // one outstanding READ from the peer: the probe's record read
  t.attr.min_rnr_timer = rel.min_rnr_timer;
  t.attr.ah_attr.port_num = port.port_num;
  t.attr.ah_attr.sl = 0;
  t.attr.ah_attr.src_path_bits = 0;
  t.attr.ah_attr.dlid = port.ethernet ? 0 : remote.lid;
  // RoCE has no LIDs: every packet carries a GRH addressed by GID. On IB a peer without a LID
  // (lid 0) is in another subnet and is reached through a router, also by GID.
  t.attr.ah_attr.is_global = (port.ethernet || remote.lid == 0) ? 1 : 0;
  if (t.attr.ah_attr.is_global) {
    std::memcpy(t.attr.ah_attr.grh.dgid.raw, remote.gid.data(), remote.gid.size());
    t.attr.ah_attr.grh.sgid_index = port.sgid_index;
    t.attr.ah_attr.grh.hop_limit = port.hop_limit;
    t.attr.ah_attr.grh.traffic_class = port.traffic_class;
    t.attr.ah_attr.grh.flow_label = 0;
  }
  t.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
           IBV_QP_MIN_RNR_TIMER;
}

// RTS: the sender's reliability. These are the hardware half of the layered timeouts: after
// retry_cnt retries of 4.096 us * 2^timeout each the HCA reports RETRY_EXC_ERR (seed §3.4).
void fill_rts(QpTransition& t, const QpReliability& rel, const LocalPortContext& port) {
  t.attr.timeout = rel.timeout;
  t.attr.retry_cnt = rel.retry_cnt;
  t.attr.rnr_retry = rel.rnr_retry;
  t.attr.sq_psn = port.local_psn & kPsnMask;
  t.attr.max_rd_atomic = 1;
  t.mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
}

}  // namespace

Result<QpTransition> qp_transition(QpState current, const ModifyQp& m, const LocalPortContext& port) {
  QpTransition t;
  t.from = to_ibv(current);
  t.to = to_ibv(m.target);
  t.attr.qp_state = t.to;
  // No alternate path is ever loaded (IBV_QP_ALT_PATH stays out of every mask): hardware APM
  // would migrate the QP underneath the engine's own failover (seed §16.5; apm_check.hpp).
  switch (m.target) {
    case QpState::Reset:
    case QpState::Err:
      t.mask = IBV_QP_STATE;  // legal from every state; ERR flushes every outstanding WR
      return t;
    case QpState::Init:
      if (current != QpState::Reset && current != QpState::Init) return refused(current, m.target, "INIT is entered from RESET");
      t.attr.pkey_index = port.pkey_index;
      t.attr.port_num = port.port_num;
      t.attr.qp_access_flags = kQpAccess;
      t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
      return t;
    case QpState::Rtr:
      if (current != QpState::Init) return refused(current, m.target, "RTR is entered from INIT");
      if (!m.remote) return refused(current, m.target, "RTR needs the peer's endpoint (qpn, psn, gid/lid)");
      fill_rtr(t, *m.remote, m.reliability.value_or(QpReliability{}), port);
      return t;
    case QpState::Rts:
      if (current == QpState::Rts) {
        // RTS->RTS: of the reliability settings only the RNR timer may change (IB spec
        // §11.2.4.2: timeout and retry_cnt are fixed once the QP left RTR).
        t.attr.min_rnr_timer = m.reliability.value_or(QpReliability{}).min_rnr_timer;
        t.mask = IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER;
        return t;
      }
      if (current != QpState::Rtr) return refused(current, m.target, "RTS is entered from RTR");
      fill_rts(t, m.reliability.value_or(QpReliability{}), port);
      return t;
    case QpState::Sqd:
    case QpState::Sqe:
      return refused(current, m.target, "the engine never drains or errors only the send queue");
  }
  return refused(current, m.target, "unknown target state");
}

}  // namespace railcheck::hw::verbs
