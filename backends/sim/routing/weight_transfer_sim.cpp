#include "backends/sim/routing/weight_transfer_sim.hpp"

#include <algorithm>
#include <stdexcept>

#include "backends/sim/routing/weight_transfer_run.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {

std::string_view to_string(WriteQueues q) { return q == WriteQueues::PerPeer ? "per-peer" : "per-write"; }

WeightTransferResult simulate_weight_transfer(const WeightTransferInput& in, const FabricParams& fabric_params,
                                              const PipelineParams& pipeline, WireMode wire) {
  if (wire == WireMode::Sendto && pipeline.write_queues != WriteQueues::PerWrite)
    throw std::invalid_argument("the sendto driver (RAILCHECK_SIM_WIRE=sendto) models only write_queues = \"per-write\"");
  const std::uint32_t trainers = in.trainer.ranks;
  const auto rollouts = static_cast<std::uint32_t>(in.rollout.gpus.size());
  if (trainers == 0 || rollouts == 0) return {};
  auto engine = make_routing_engine();
  GpuFabric fabric(trainers + rollouts, fabric_params);
  TransferRun run{fabric,
                  pipeline,
                  trainers,
                  rollouts,
                  pipeline_tasks(in.trainer, in.rollout, in.mappings, in.table, pipeline.batch_bytes),
                  {},
                  sg4::Barrier::create(trainers),
                  std::vector<StageSeconds>(trainers),
                  std::vector<std::uint64_t>(trainers, 0),
                  std::vector<double>(in.table.groups.size(), 0.0),
                  sim_now()};
  WeightTransferResult out;
  for (auto& group : run.tasks)
    for (auto& list : group)
      for (const PipelineTask& t : list) {
        ++out.tasks;
        out.writes += t.writes.size();
        if (t.peers.size() > 1 && !run.gather_barriers.contains(t.peers))
          run.gather_barriers.emplace(t.peers, sg4::Barrier::create(static_cast<unsigned>(t.peers.size())));
      }
  const std::shared_ptr<void> actors = wire == WireMode::Sendto ? spawn_sendto_driver(run) : spawn_gpu_driver(run);
  engine->run();

  out.total_s = sim_now() - run.start;
  out.group_end_s = run.group_end;
  const double nic = fabric.nic_bytes_per_s();
  const double bytes = static_cast<double>(in.table.total_bytes);
  out.ideal_s = bytes / (nic * std::min(trainers, rollouts));
  const auto busiest = std::max(*std::max_element(in.table.sent_bytes.begin(), in.table.sent_bytes.end()),
                                *std::max_element(in.table.received_bytes.begin(), in.table.received_bytes.end()));
  out.nic_bound_s = static_cast<double>(busiest) / nic;
  for (const StageSeconds& s : run.stages) {
    out.mean_stage.cap_wait += s.cap_wait / trainers;
    out.mean_stage.h2d += s.h2d / trainers;
    out.mean_stage.gather += s.gather / trainers;
    out.mean_stage.gpu_ops += s.gpu_ops / trainers;
    out.mean_stage.barrier += s.barrier / trainers;
  }
  out.peak_tmp_bytes = *std::max_element(run.peak_tmp.begin(), run.peak_tmp.end());
  return out;
}

}  // namespace railcheck::sim
