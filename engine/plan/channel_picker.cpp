// Least-loaded channel choice for collectives (channel_picker.hpp), after NCCL 2.18
// src/enqueue.cc addCollToPlan.
#include "engine/plan/channel_picker.hpp"

#include "engine/core/engine_assert.hpp"

namespace railcheck::plan {

std::vector<std::uint32_t> pick_least_loaded(std::span<const std::uint64_t> loads, std::uint32_t n_bid) {
  if (!RAILCHECK_ASSERT(n_bid >= 1 && n_bid <= loads.size(), "bids for between one and all of the channels")) return {};
  std::vector<std::uint32_t> least(n_bid);
  std::uint32_t max_index = 0;
  std::uint64_t max_bytes = loads[0];
  least[0] = 0;
  for (std::uint32_t b = 1; b < n_bid; ++b) {
    least[b] = b;
    if (max_bytes < loads[b]) {
      max_index = b;
      max_bytes = loads[b];
    }
  }
  for (auto c = n_bid; c < loads.size(); ++c) {
    if (loads[c] >= max_bytes) continue;
    least[max_index] = c;
    max_index = 0;
    max_bytes = loads[least[0]];
    for (std::uint32_t b = 1; b < n_bid; ++b) {
      if (max_bytes < loads[least[b]]) {
        max_index = b;
        max_bytes = loads[least[b]];
      }
    }
  }
  return least;
}

}  // namespace railcheck::plan
