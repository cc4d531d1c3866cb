#pragma once
// The engine's ModifyQp action as the exact ibv_modify_qp arguments (IB spec vol. 1 §11.2.4.2,
// the attribute/mask table; rdma-core's rc_pingpong does the same three steps). A pure function,
// so every mask and value is unit tested without a device; rc_qp.cpp only hands the result to
// ibv_modify_qp.
//
// Allowed: RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS, RTS->RTS (RNR timer only), any->ERR,
// any->RESET. The engine never asks for SQD/SQE; asking is an error value, not a silent no-op.
#include <infiniband/verbs.h>

#include <cstdint>

#include "engine/core/action.hpp"
#include "engine/core/result.hpp"

namespace railcheck::hw::verbs {

// The local half of the addressing that ModifyQp does not carry (it is per device and port).
struct LocalPortContext {
  std::uint8_t port_num = 1;
  std::uint16_t pkey_index = 0;
  std::uint8_t sgid_index = 0;
  ibv_mtu path_mtu = IBV_MTU_4096;
  bool ethernet = false;       // RoCE: addressing by GID (GRH), dlid 0
  std::uint32_t local_psn = 0;  // our send queue's first PSN (the handle's psn), for RTS
  std::uint8_t hop_limit = 64;  // GRH hop limit (RoCE v2 routes over IP)
  std::uint8_t traffic_class = 0;
};

struct QpTransition {
  ibv_qp_attr attr{};
  int mask = 0;
  ibv_qp_state from = IBV_QPS_RESET;
  ibv_qp_state to = IBV_QPS_RESET;
};

ibv_qp_state to_ibv(QpState s);

// Access rights every data QP gets at INIT: the peer writes into registered buffers (WRITE_IMM)
// and the probe policy reads the receiver's completion record (RDMA READ).
constexpr int kQpAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

Result<QpTransition> qp_transition(QpState current, const ModifyQp& m, const LocalPortContext& port);

}  // namespace railcheck::hw::verbs
