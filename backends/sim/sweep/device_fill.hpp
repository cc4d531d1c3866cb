#pragma once
// The maxComms study's driver (seed §15.4, experiment C): open connections on one modeled HCA
// until it refuses an allocation, and count the connections that opened completely. Each
// connection is created the way the HA plugin creates it (engine/budget/comm_budget.hpp has the
// unit): per channel a send comm and a receive comm; per comm its paths; per path, with
// CqLayout::PerComm, its own CQ, then its two-sided QPs and one-sided QPs. The send comm's
// two-sided QP has a send queue of wr x maxRecvs and reserves as many CQEs; the receive comm's
// has a receive queue of wr; a one-sided QP a send queue of wr. With CqLayout::Device one CQ of
// max_cqe entries is created first and every QP commits its CQEs to it.
#include <cstdint>

#include "backends/sim/sweep/modeled_hca.hpp"
#include "engine/budget/comm_budget.hpp"
#include "engine/core/result.hpp"

namespace railcheck::sweep {

struct DeviceFill {
  std::uint64_t connections = 0;  // opened completely before the refusal
  HcaRefusal refusal;             // what stopped the next one
  std::uint64_t qps = 0;          // created in all, the refused connection's partial ones included
  std::uint64_t cqs = 0;
};

// Opening QPs one by one is linear in max_qp: caps above kMaxModeledQps are refused as input.
constexpr std::uint64_t kMaxModeledQps = std::uint64_t{1} << 24;
Result<DeviceFill> fill_device(const budget::BudgetCaps& caps, const budget::BudgetUsage& usage);

}  // namespace railcheck::sweep
