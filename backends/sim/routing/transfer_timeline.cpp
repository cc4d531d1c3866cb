#include "backends/sim/routing/transfer_timeline.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace railcheck::sim {
namespace {

// Spreads `amount` evenly over [t0, t1) into bins of `bin` seconds, growing `bins` as needed.
void spread_in_bins(std::vector<double>& bins, double bin, double amount, double t0, double t1) {
  assert(t1 >= t0);
  const auto last = static_cast<std::size_t>(std::floor(t1 / bin));
  if (bins.size() <= last) bins.resize(last + 1, 0.0);
  if (t1 <= t0) {
    bins[last] += amount;
    return;
  }
  const double rate = amount / (t1 - t0);
  for (auto b = static_cast<std::size_t>(std::floor(t0 / bin)); b <= last; ++b) {
    const double lo = std::max(t0, static_cast<double>(b) * bin);
    const double hi = std::min(t1, static_cast<double>(b + 1) * bin);
    if (hi > lo) bins[b] += rate * (hi - lo);
  }
}

}  // namespace

TransferTimeline::TransferTimeline(std::uint32_t trainers, std::uint32_t rollouts, double bin)
    : bin_s(bin), trainer_nic_tx(trainers), rollout_nic_rx(rollouts) {
  assert(bin > 0);
  for (auto& per_trainer : stage_s) per_trainer.resize(trainers);
}

void TransferTimeline::stage(std::uint32_t trainer, Stage s, double t0, double t1) {
  spread_in_bins(stage_s[static_cast<std::size_t>(s)][trainer], bin_s, t1 - t0, t0, t1);
}

void TransferTimeline::sent(std::uint32_t trainer, double bytes, double t0, double t1) {
  spread_in_bins(trainer_nic_tx[trainer], bin_s, bytes, t0, t1);
}

void TransferTimeline::received(std::uint32_t rollout, double bytes, double t0, double t1) {
  spread_in_bins(rollout_nic_rx[rollout], bin_s, bytes, t0, t1);
}

}  // namespace railcheck::sim
