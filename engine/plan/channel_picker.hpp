#pragma once
// The collective channel picker: the `nBid` channels with the fewest bytes so far in this plan
// (2.18 addCollToPlan, chans[c].collBytes). Reproduced step by step, not as a sort, because
// its tie-breaking is the behaviour: least[] starts as channels 0..nBid-1 and a later channel
// replaces the current maximum only when strictly smaller, so among equal loads the lower
// index wins and the result comes back in least[] order, not sorted.
// Identical loads give identical picks on every rank; that is NCCL's only guarantee that a
// collective lands on the same channels everywhere.
#include <cstdint>
#include <span>
#include <vector>

namespace railcheck::plan {

// loads[c] for c < loads.size() (the collective channels); 1 <= n_bid <= loads.size().
std::vector<std::uint32_t> pick_least_loaded(std::span<const std::uint64_t> loads, std::uint32_t n_bid);

}  // namespace railcheck::plan
