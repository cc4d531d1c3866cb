#pragma once
// The resource table of one simulated HCA: QPs, CQs and the queue and CQ depths they were created
// with, refused the way ibv_create_qp / ibv_create_cq refuse (ENOMEM/EINVAL) once a device limit
// is reached. A QP attached to a CQ commits its reserved completions to that CQ; a commitment
// past the CQ's depth is refused, since a CQ overrun is a fatal async error (IBV_EVENT_CQ_ERR).
// Used by the maxComms study (device_fill.hpp) to count what a device really holds.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "engine/budget/comm_budget.hpp"

namespace railcheck::sweep {

struct HcaRefusal {
  budget::BudgetResource resource{};  // which limit refused
  std::string what;                   // "create_qp: 131072 QPs already exist (max_qp 131072)"
};

class ModeledHca {
 public:
  explicit ModeledHca(budget::BudgetCaps caps) : caps_(std::move(caps)) {}

  // Returns the CQ's index, or the refusal.
  std::variant<std::uint32_t, HcaRefusal> create_cq(std::uint64_t depth);
  // sq/rq: queue depths; cqes: completions this QP may have outstanding on `cq` at once.
  std::variant<std::uint32_t, HcaRefusal> create_qp(std::uint32_t cq, std::uint64_t sq, std::uint64_t rq,
                                                    std::uint64_t cqes);
  std::uint64_t qps() const { return qps_; }
  std::uint64_t cqs() const { return cq_committed_.size(); }
  std::uint64_t committed(std::uint32_t cq) const { return cq_committed_[cq]; }

 private:
  budget::BudgetCaps caps_;
  std::uint64_t qps_ = 0;
  std::vector<std::uint64_t> cq_depth_;
  std::vector<std::uint64_t> cq_committed_;
};

}  // namespace railcheck::sweep
