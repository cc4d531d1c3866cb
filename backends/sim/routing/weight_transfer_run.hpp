#pragma once
// What the two weight-transfer drivers share (weight_transfer_sim.cpp): the tasks, the
// collectives' barriers, and where each trainer GPU's time and memory went. Internal to
// railcheck_sim_routing.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>
#include <vector>

#include "backends/sim/routing/gpu_fabric.hpp"
#include "backends/sim/routing/transfer_timeline.hpp"
#include "backends/sim/routing/weight_tasks.hpp"
#include "backends/sim/routing/weight_transfer_sim.hpp"

namespace railcheck::sim {

struct TransferRun {
  const GpuFabric& fabric;
  const PipelineParams& pipeline;
  std::uint32_t trainers;                                     // fabric GPUs [0, trainers)
  std::uint32_t rollouts;                                     // fabric GPUs [trainers, trainers + rollouts)
  std::vector<std::vector<std::vector<PipelineTask>>> tasks;  // [group][trainer]
  std::map<std::vector<std::uint32_t>, simgrid::s4u::BarrierPtr> gather_barriers;
  simgrid::s4u::BarrierPtr group_barrier;
  std::vector<StageSeconds> stages;     // per trainer
  std::vector<std::uint64_t> peak_tmp;  // per trainer
  std::vector<double> group_end;        // per mesh group, seconds after `start`
  double start = 0;
  std::uint64_t landed_writes = 0;       // as the drivers take them, for progress reports
  TransferTimeline* timeline = nullptr;  // recorded by the GPU driver when asked for
};

inline double sim_now() { return simgrid::s4u::Engine::get_clock(); }

// Adds the time `body` takes to `into`.
template <typename F>
void timed(double& into, F&& body) {
  const double t0 = sim_now();
  body();
  into += sim_now() - t0;
}

// A ring all-gather: each of the k peers passes (k - 1) / k of the tensor to the next one with
// `send(from_host, to_host, bytes)`. Entered and left together, as full_tensor() is a collective.
template <typename Send>
void ring_gather(const TransferRun& run, std::uint32_t rank, const PipelineTask& t, Send&& send) {
  const auto k = static_cast<std::uint32_t>(t.peers.size());
  if (k < 2) return;
  simgrid::s4u::Barrier& barrier = *run.gather_barriers.at(t.peers);
  barrier.wait();
  const auto me = static_cast<std::uint32_t>(std::find(t.peers.begin(), t.peers.end(), rank) - t.peers.begin());
  const auto [from, to] = run.fabric.route(rank, t.peers[(me + 1) % k]);
  send(from, to, t.gathered_bytes / k * (k - 1));
  barrier.wait();
}

// Both drivers run the same pipeline (weight_transfer_sim.hpp); they differ in what SimGrid
// pays for it:
//   - the GPU driver: one actor per trainer GPU issues every transfer of its pipeline itself as a
//     mailbox put to a permanent receiver, and takes its writes' completions with wait_any;
//   - the sendto driver (before issue 15, kept for one release behind RAILCHECK_SIM_WIRE=sendto):
//     detached host-to-host Comm::sendto for every transfer and one writer actor per task.
// Each spawns its actors into the current engine and returns their state, which the caller keeps
// until the engine has run.
std::shared_ptr<void> spawn_gpu_driver(TransferRun& run);
std::shared_ptr<void> spawn_sendto_driver(TransferRun& run);

}  // namespace railcheck::sim
