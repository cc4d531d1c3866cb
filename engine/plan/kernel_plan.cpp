// KernelPlan helpers (kernel_plan.hpp).
#include "engine/plan/kernel_plan.hpp"

namespace railcheck::plan {

std::uint64_t KernelPlan::channel_mask() const {
  std::uint64_t mask = 0;
  for (std::size_t c = 0; c < channels.size(); ++c)
    if (!channels[c].work.empty()) mask |= 1ULL << c;
  return mask;
}

}  // namespace railcheck::plan
