#pragma once
// The maxComms budget a net plugin reports in getProperties (seed §3.1, §15.2; debug print §16.6).
//
// Unit: one *connection* is one peer on this device over `channels` channels, each channel
// holding a send comm and a receive comm (NCCL opens one of each per channel and peer), each
// comm holding `paths` paths (primary + standbys), each path its QPs. The seed's formula is
//   qp_limit  = max_qp  / (2 * channels)
//   cqe_limit = max_cqe / ((wr * max_recvs + wr) * 2 * channels)
//   maxComms  = min(qp_limit, cqe_limit, 256)
// Its CQE term counts the send and the receive comm of every channel on two paths; its QP term
// counts only two QPs per channel, which is one QP per path for the two comms together. The
// accounting below counts every QP that is created (2 comms x paths x QPs per path per
// channel), so with the seed's usage it reports half the seed's QP limit; `seed_formula`
// keeps the seed's arithmetic for comparison.
//
// CQEs: ibv_device_attr.max_cqe bounds one CQ, not the device. It is a pool for all comms only
// when they share one CQ per device (CqLayout::Device, the seed's assumption); with one CQ per
// comm and path it bounds each CQ's depth and the count of CQs (max_cq) bounds the comms.
// Both paths reserve their CQEs: at failover the primary's in-flight WRs complete as flush
// errors while the standby's replays complete normally, so both CQs hold `wr` entries at once.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::budget {

// The device limits the budget divides (ibv_device_attr fields; EFA: efadv/ibv query).
struct BudgetCaps {
  std::uint64_t max_qp = 0;     // QPs per device
  std::uint64_t max_cqe = 0;    // entries of one CQ
  std::uint64_t max_qp_wr = 0;  // outstanding WRs on one send or receive queue
  std::uint64_t max_cq = 0;     // CQs per device; 0 = not known (no preset carries it): not checked
  std::string source;           // where the caps come from: "preset cx7-400g", "device mlx5_0"
};

enum class CqLayout : std::uint8_t {
  Device,   // one CQ per device shared by every comm (the seed's assumption)
  PerComm,  // one CQ per comm and path, sized to that comm's demand
};
std::string_view cq_layout_name(CqLayout l);  // "device", "per-comm"

// What one connection uses. Defaults are the seed's (§15.2): 16 channels, 64 WRs, maxRecvs 8,
// two paths, one two-sided QP per path, one shared CQ, and its safety cap of 256.
struct BudgetUsage {
  std::uint32_t channels = 16;     // HA_NCCL_EXPECTED_CHANNELS
  std::uint32_t wr_per_conn = 64;  // HA_NCCL_WR_PER_CONN: in-flight WRs per comm
  std::uint32_t max_recvs = 8;     // HA_NCCL_MAX_RECVS: the send side reserves wr * max_recvs (§15.2)
  std::uint32_t paths = 2;         // primary + standbys
  std::uint32_t two_sided_qps_per_path = 1;
  std::uint32_t one_sided_qps_per_path = 0;  // a separate QP for RDMA WRITE(_IMM), per comm and path
  CqLayout cq_layout = CqLayout::Device;
  std::uint32_t comms_cap = 256;  // the seed's fixed cap; 0 = none
};

enum class BudgetResource : std::uint8_t { Qp, Cqe, Cq, QpWr, Cap };
std::string_view resource_name(BudgetResource r);  // "max_qp", "max_cqe", "max_cq", "max_qp_wr", "cap"

constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();

struct ResourceLimit {
  BudgetResource resource{};
  std::uint64_t cap = 0;       // the device's limit (per device; per CQ or per queue where noted)
  std::uint64_t per_conn = 0;  // used per connection (QpWr: the deepest queue; PerComm Cqe: the deepest CQ)
  std::uint64_t conns = 0;     // connections that fit; kUnbounded when this resource does not limit the count
  bool checked = true;         // false: the cap is not known
  std::string note;            // how per_conn is made up, for the debug print
};

// The seed's own arithmetic (§15.2), unchanged.
struct SeedFormula {
  std::uint64_t qp_limit = 0;
  std::uint64_t cqe_limit = 0;
  std::uint64_t max_comms = 0;
};

struct CommBudget {
  std::vector<ResourceLimit> limits;  // Qp, Cqe, Cq, QpWr in that order
  std::uint64_t max_comms = 0;        // min over the checked limits and the cap
  BudgetResource binding{};           // the resource that sets max_comms (Cap only when below every resource)
  std::uint64_t resource_comms = 0;   // connections the tightest resource allows (>= max_comms)
  std::uint32_t max_recvs = 0;        // what getProperties reports as maxRecvs
  std::uint64_t qps_per_conn = 0;     // what one connection creates, for drivers that open them
  std::uint64_t cqs_per_conn = 0;     // PerComm: CQs created; Device: 0
  std::uint64_t send_cqes = 0;        // CQEs one send comm reserves per path
  std::uint64_t recv_cqes = 0;        // CQEs one receive comm reserves per path
  SeedFormula seed;

  const ResourceLimit& limit(BudgetResource r) const;
  // max_comms over what the tightest resource allows: > 1 means the cap leaves headroom.
  double headroom() const;
};

// Errors: a zero usage count (channels, WRs, paths, QPs per path) or a zero max_qp / max_cqe /
// max_qp_wr, named with its value.
Result<CommBudget> compute_budget(const BudgetCaps& caps, const BudgetUsage& usage);

}  // namespace railcheck::budget
