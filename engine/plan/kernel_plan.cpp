// KernelPlan helpers (kernel_plan.hpp).
#include "engine/plan/kernel_plan.hpp"

#include "engine/core/engine_assert.hpp"

namespace railcheck::plan {

std::uint64_t KernelPlan::channel_mask() const {
  std::uint64_t mask = 0;
  if (!RAILCHECK_ASSERT(channels.size() <= 64, "a plan has at most MAXCHANNELS (64) channels")) return mask;
  for (std::size_t c = 0; c < channels.size(); ++c)
    if (!channels[c].work.empty()) mask |= 1ULL << c;
  return mask;
}

}  // namespace railcheck::plan
