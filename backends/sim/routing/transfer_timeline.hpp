#pragma once
// Where a weight transfer's time went, over simulated time: per trainer GPU the seconds of each
// pipeline stage, per NIC the bytes it sent or received, in fixed bins (docs/routing.md plots
// it). Filled by the GPU driver while it runs; a recorded run's figures are an unrecorded one's.
#include <array>
#include <cstdint>
#include <vector>

namespace railcheck::sim {

enum class Stage : std::uint8_t { CapWait, H2d, Gather, GpuOps, Barrier };
inline constexpr std::size_t kStages = 5;

struct TransferTimeline {
  double bin_s = 0.005;
  // [stage][trainer][bin]: seconds the trainer GPU spent in that stage within the bin.
  std::array<std::vector<std::vector<double>>, kStages> stage_s;
  std::vector<std::vector<double>> trainer_nic_tx;  // [trainer][bin]: bytes out (writes and gathers)
  std::vector<std::vector<double>> rollout_nic_rx;  // [rollout][bin]: bytes of writes in

  TransferTimeline(std::uint32_t trainers, std::uint32_t rollouts, double bin);
  // Seconds [t0, t1) after the run's start.
  void stage(std::uint32_t trainer, Stage s, double t0, double t1);
  // `bytes` that crossed a NIC over [t0, t1), counted at an even rate (the fluid model's rate
  // changes inside a transfer; a bin much longer than one write hides it).
  void sent(std::uint32_t trainer, double bytes, double t0, double t1);
  void received(std::uint32_t rollout, double bytes, double t0, double t1);
};

}  // namespace railcheck::sim
