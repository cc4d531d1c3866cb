#include "backends/sim/routing/weight_transfer_sim.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>

#include "backends/sim/routing/weight_tasks.hpp"
#include "backends/sim/wire.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

// A trainer GPU's temporary memory: taken before a task's H2D copy, given back when its last
// write lands (seed: tmp_bytes against max_tmp_bytes).
struct TmpMemory {
  std::uint64_t cap = 0;
  std::uint64_t used = 0;
  std::uint64_t peak = 0;
  std::uint32_t tasks = 0;
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr freed = sg4::ConditionVariable::create();

  void take(std::uint64_t bytes) {
    std::unique_lock lock(*mutex);
    freed->wait(lock, [&] { return tasks == 0 || used + bytes <= cap; });
    used += bytes;
    ++tasks;
    peak = std::max(peak, used);
  }
  void give(std::uint64_t bytes) {
    std::unique_lock lock(*mutex);
    used -= bytes;
    --tasks;
    freed->notify_all();
  }
};

struct Run {
  const GpuFabric& fabric;
  const PipelineParams& pipeline;
  std::uint32_t trainers;
  std::vector<std::vector<std::vector<PipelineTask>>> tasks;  // [group][trainer]
  std::map<std::vector<std::uint32_t>, sg4::BarrierPtr> gather_barriers;
  sg4::BarrierPtr group_barrier;
  std::vector<TmpMemory> memory;
  std::vector<StageSeconds> stages;
  std::vector<double> group_end;
  double start = 0;
  WireMode wire = WireMode::Mailbox;
  std::vector<sg4::Mailbox*> inboxes;  // WireMode::Mailbox: per rollout GPU, its NIC's mailbox
};

double now() { return sg4::Engine::get_clock(); }

// Adds the time `body` takes to `into`.
template <typename F>
void timed(double& into, F&& body) {
  const double t0 = now();
  body();
  into += now() - t0;
}

// A ring all-gather: each peer passes (k - 1) / k of the tensor to the next one. Entered and
// left together, as full_tensor() is a collective.
void gather(Run& run, std::uint32_t rank, const PipelineTask& t) {
  const auto k = static_cast<std::uint32_t>(t.peers.size());
  if (k < 2) return;
  sg4::Barrier& barrier = *run.gather_barriers.at(t.peers);
  barrier.wait();
  const auto me = static_cast<std::uint32_t>(std::find(t.peers.begin(), t.peers.end(), rank) - t.peers.begin());
  const auto [from, to] = run.fabric.route(rank, t.peers[(me + 1) % k]);
  sg4::Comm::sendto(from, to, t.gathered_bytes / k * (k - 1));
  barrier.wait();
}

// Runs on the trainer's NIC host. On the mailbox wire each write is a put to the rollout NIC's
// mailbox, whose permanent receiver sits on that NIC: the same transfer as
// Comm::sendto_async(nic(rank), nic(rollout)), but not detached, so SimGrid 3.32 does not walk
// every write in flight at each completion (docs/benchmarks.md, the mailbox wire).
void write_out(Run& run, std::uint32_t rank, std::size_t group, const PipelineTask& t) {
  std::vector<sg4::CommPtr> comms;
  for (const routing::WeightWrite& w : t.writes) {
    if (run.wire == WireMode::Sendto) {
      comms.push_back(
          sg4::Comm::sendto_async(run.fabric.nic(rank), run.fabric.nic(run.trainers + w.rollout_gpu), w.bytes));
    } else {
      comms.push_back(run.inboxes[w.rollout_gpu]->put_async(&run, w.bytes));
    }
  }
  sg4::Comm::wait_all(comms);
  run.memory[rank].give(t.tmp_bytes);
  run.group_end[group] = std::max(run.group_end[group], now() - run.start);
}

void trainer_gpu(Run& run, std::uint32_t rank) {
  StageSeconds& s = run.stages[rank];
  for (std::size_t g = 0; g < run.tasks.size(); ++g) {
    for (const PipelineTask& t : run.tasks[g][rank]) {
      timed(s.cap_wait, [&] { run.memory[rank].take(t.tmp_bytes); });
      if (run.pipeline.cpu_offload)
        timed(s.h2d, [&] { sg4::Comm::sendto(run.fabric.host_memory(rank), run.fabric.compute(rank), t.local_bytes); });
      timed(s.gather, [&] { gather(run, rank, t); });
      timed(s.gpu_ops, [&] {
        sg4::this_actor::sleep_for(to_seconds(run.pipeline.gpu_op_overhead) * t.tensors);
        if (t.output_bytes > 0) sg4::this_actor::execute(static_cast<double>(t.gathered_bytes + t.output_bytes));
      });
      if (t.writes.empty()) {
        run.memory[rank].give(t.tmp_bytes);
        continue;
      }
      sg4::Actor::create("write", run.fabric.nic(rank), [&run, rank, g, &t] { write_out(run, rank, g, t); });
    }
    timed(s.barrier, [&] {
      run.group_barrier->wait();
      sg4::this_actor::sleep_for(to_seconds(run.pipeline.barrier_latency));
    });
  }
}

}  // namespace

WeightTransferResult simulate_weight_transfer(const WeightTransferInput& in, const FabricParams& fabric_params,
                                              const PipelineParams& pipeline, WireMode wire) {
  const std::uint32_t trainers = in.trainer.ranks;
  const auto rollouts = static_cast<std::uint32_t>(in.rollout.gpus.size());
  if (trainers == 0 || rollouts == 0) return {};
  auto engine = make_routing_engine();
  GpuFabric fabric(trainers + rollouts, fabric_params);
  Run run{fabric,
          pipeline,
          trainers,
          pipeline_tasks(in.trainer, in.rollout, in.mappings, in.table, pipeline.batch_bytes),
          {},
          sg4::Barrier::create(trainers),
          std::vector<TmpMemory>(trainers),
          std::vector<StageSeconds>(trainers),
          std::vector<double>(in.table.groups.size(), 0.0),
          now()};
  WeightTransferResult out;
  for (auto& group : run.tasks)
    for (auto& list : group)
      for (const PipelineTask& t : list) {
        ++out.tasks;
        out.writes += t.writes.size();
        if (t.peers.size() > 1 && !run.gather_barriers.contains(t.peers))
          run.gather_barriers.emplace(t.peers, sg4::Barrier::create(static_cast<unsigned>(t.peers.size())));
      }
  for (TmpMemory& m : run.memory) m.cap = pipeline.max_tmp_bytes;
  run.wire = wire;
  for (std::uint32_t g = 0; g < rollouts && wire == WireMode::Mailbox; ++g) {
    sg4::Host* nic = fabric.nic(trainers + g);
    run.inboxes.push_back(sg4::Mailbox::by_name(nic->get_name()));
    start_permanent_receiver(nic, run.inboxes.back());
  }
  for (std::uint32_t r = 0; r < trainers; ++r)
    sg4::Actor::create("trainer" + std::to_string(r), fabric.compute(r), [&run, r] { trainer_gpu(run, r); });
  engine->run();

  out.total_s = now() - run.start;
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
  for (const TmpMemory& m : run.memory) out.peak_tmp_bytes = std::max(out.peak_tmp_bytes, m.peak);
  return out;
}

}  // namespace railcheck::sim
