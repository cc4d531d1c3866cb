#pragma once
// How many work items one kernel plan may hold (2.18 ncclLaunchPrepare: "Non-persistent
// kernels fill up at most half of our fifo per kernel": nWorkBudget = persistent ? INT_MAX :
// workFifoDepth/2). A task that does not fit ends the plan; the next plan starts afresh.
#include <cstdint>
#include <limits>

#include "engine/core/engine_assert.hpp"

namespace railcheck::plan {

class WorkBudget {
 public:
  static WorkBudget for_plan(bool persistent, std::uint32_t work_fifo_depth) {
    return WorkBudget(persistent ? std::numeric_limits<std::uint64_t>::max() : work_fifo_depth / 2);
  }

  bool fits(std::uint64_t items) const { return items <= left_; }
  void spend(std::uint64_t items) {
    RAILCHECK_ASSERT(items <= left_, "a plan spends only work items that fit() let in");
    left_ -= items;
  }
  std::uint64_t left() const { return left_; }

 private:
  explicit WorkBudget(std::uint64_t left) : left_(left) {}
  std::uint64_t left_;
};

}  // namespace railcheck::plan
