#pragma once
// RC QPs on a real device: the thin executor of the engine's ModifyQp actions (the attributes
// come from qp_transition.hpp) and the source of the HA handle's fields. Each engine path gets
// two RC QPs to the same peer, one for two-sided SEND/RECV and one for one-sided WRITE(_IMM),
// because an RC QP consumes RECVs strictly in posting order whatever the incoming opcode
// (engine/imm/qp_split.hpp says what goes wrong with one shared QP).
//
// Runs only where a device exists; everything here returns "no RDMA device found" otherwise.
#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

#include "backends/hw/verbs/qp_transition.hpp"
#include "backends/hw/verbs/verbs_probe.hpp"
#include "engine/core/action.hpp"
#include "engine/core/result.hpp"
#include "engine/handshake/handle_codec.hpp"

namespace railcheck::hw::verbs {

struct QpSizes {
  std::uint32_t send_wr = 64;  // HA_NCCL_WR_PER_CONN
  std::uint32_t recv_wr = 64;
  std::uint32_t sge = 1;
  std::uint32_t cqe = 1024;
};

// One opened device port: context, protection domain, one completion queue.
class VerbsPort {
 public:
  // `device` empty: the first device with an active port. `gid_index` comes from choose_gid().
  static Result<std::unique_ptr<VerbsPort>> open(const std::string& device, std::uint8_t port, const QpSizes& sizes);
  ~VerbsPort();
  VerbsPort(const VerbsPort&) = delete;
  VerbsPort& operator=(const VerbsPort&) = delete;

  ibv_context* context() const { return ctx_; }
  ibv_pd* pd() const { return pd_; }
  ibv_cq* cq() const { return cq_; }
  const PortInfo& port() const { return port_; }
  const std::string& name() const { return name_; }

 private:
  VerbsPort() = default;
  std::string name_;
  PortInfo port_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
};

class RcQp {
 public:
  // `psn` is the first send PSN; the driver draws it from the run's seeded generator.
  static Result<std::unique_ptr<RcQp>> create(VerbsPort& port, const QpSizes& sizes, std::uint32_t psn);
  ~RcQp();
  RcQp(const RcQp&) = delete;
  RcQp& operator=(const RcQp&) = delete;

  // Executes one ModifyQp action; the QP's state follows only when ibv_modify_qp succeeded.
  Result<bool> apply(const ModifyQp& m);
  QpState state() const { return state_; }
  QpEndpoint local_endpoint() const;
  ibv_qp* qp() const { return qp_; }

 private:
  RcQp(VerbsPort& port, std::uint32_t psn) : port_(port), psn_(psn) {}
  VerbsPort& port_;
  ibv_qp* qp_ = nullptr;
  std::uint32_t psn_;
  QpState state_ = QpState::Reset;
};

// The listen handle of a path whose two-sided QP is `qp` (engine/handshake/handle_codec.hpp).
ConnectionHandle handle_for(const RcQp& qp, bool dual_path);

}  // namespace railcheck::hw::verbs
