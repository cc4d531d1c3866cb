#include "backends/sim/sweep/modeled_hca.hpp"

#include <fmt/format.h>

namespace railcheck::sweep {

using budget::BudgetResource;

std::variant<std::uint32_t, HcaRefusal> ModeledHca::create_cq(std::uint64_t depth) {
  if (depth > caps_.max_cqe)
    return HcaRefusal{BudgetResource::Cqe, fmt::format("create_cq: depth {} > max_cqe {}", depth, caps_.max_cqe)};
  if (caps_.max_cq != 0 && cq_depth_.size() >= caps_.max_cq)
    return HcaRefusal{BudgetResource::Cq,
                      fmt::format("create_cq: {} CQs already exist (max_cq {})", cq_depth_.size(), caps_.max_cq)};
  cq_depth_.push_back(depth);
  cq_committed_.push_back(0);
  return static_cast<std::uint32_t>(cq_depth_.size() - 1);
}

std::variant<std::uint32_t, HcaRefusal> ModeledHca::create_qp(std::uint32_t cq, std::uint64_t sq, std::uint64_t rq,
                                                              std::uint64_t cqes) {
  if (sq > caps_.max_qp_wr || rq > caps_.max_qp_wr)
    return HcaRefusal{BudgetResource::QpWr,
                      fmt::format("create_qp: queue depth {} > max_qp_wr {}", std::max(sq, rq), caps_.max_qp_wr)};
  if (qps_ >= caps_.max_qp)
    return HcaRefusal{BudgetResource::Qp,
                      fmt::format("create_qp: {} QPs already exist (max_qp {})", qps_, caps_.max_qp)};
  if (cq_committed_.at(cq) + cqes > cq_depth_.at(cq))
    return HcaRefusal{BudgetResource::Cqe,
                      fmt::format("create_qp: CQ {} has {} of {} entries committed, {} more would overrun it", cq,
                                  cq_committed_[cq], cq_depth_[cq], cqes)};
  ++qps_;
  cq_committed_[cq] += cqes;
  return static_cast<std::uint32_t>(qps_ - 1);
}

}  // namespace railcheck::sweep
