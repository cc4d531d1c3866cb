// The weight-transfer driver of issue 15: one actor per trainer GPU, no actor per task, no
// detached comm. Every transfer is a mailbox put to the permanent receiver on the host where it
// lands (wire.hpp), issued from the host it leaves: the same route, size and network model call
// as the host-to-host Comm::sendto of the sendto driver, so the same simulated instants, but
// SimGrid keeps no global list of them (docs/benchmarks.md, the mailbox wire). The actor moves
// (Actor::set_host) to the host a transfer leaves from: its PCIe host for the H2D copy, its
// NVLink or NIC host for a gather, its NIC host for the writes; GPU kernels run on its compute
// host whatever host the actor is on. Its RDMA writes and their memory are TrainerWrites'
// (trainer_writes.hpp), one of two models of how writes share the fabric.
#include "backends/sim/routing/trainer_writes.hpp"
#include "backends/sim/routing/weight_transfer_run.hpp"
#include "backends/sim/wire.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

class TrainerGpu {
 public:
  TrainerGpu(TransferRun& run, std::uint32_t rank)
      : run_(run),
        rank_(rank),
        writes_(run.pipeline.write_queues == WriteQueues::PerPeer ? per_peer_writes(run, rank)
                                                                  : per_write_writes(run, rank)) {}

  void operator()() {
    for (std::size_t g = 0; g < run_.tasks.size(); ++g) {
      const std::vector<PipelineTask>& tasks = run_.tasks[g][rank_];
      std::size_t prefetched = tasks.size();  // the task whose memory and H2D copy are under way
      sg4::CommPtr copy;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        const PipelineTask& t = tasks[i];
        if (prefetched != i) {
          stage(Stage::CapWait, [&] { writes_->hold(t.tmp_bytes); });
          copy = copy_in(t);
        }
        stage(Stage::H2d, [&] {
          if (copy) copy->wait();
        });
        copy = nullptr;
        // A copy stream: the next shard crosses PCIe while this tensor gathers, if its memory
        // fits now (PipelineParams::prefetch_h2d). Without CPU offload there is nothing to copy.
        const PipelineParams& p = run_.pipeline;
        if (p.prefetch_h2d && p.cpu_offload && i + 1 < tasks.size() && writes_->try_hold(tasks[i + 1].tmp_bytes)) {
          prefetched = i + 1;
          copy = copy_in(tasks[i + 1]);
        }
        stage(Stage::Gather, [&] {
          ring_gather(run_, rank_, t,
                      [this](sg4::Host* from, const sg4::Host* to, std::uint64_t b) { transfer(from, to, b); });
        });
        stage(Stage::GpuOps, [&] {
          sg4::this_actor::sleep_for(to_seconds(run_.pipeline.gpu_op_overhead) * t.tensors);
          if (t.output_bytes > 0) {
            sg4::ExecPtr kernel = sg4::this_actor::exec_init(static_cast<double>(t.gathered_bytes + t.output_bytes));
            kernel->set_host(run_.fabric.compute(rank_));
            kernel->wait();
          }
        });
        if (!t.writes.empty()) go_to(run_.fabric.nic(rank_));
        writes_->post(g, t);
      }
      if (run_.pipeline.group_barrier)
        stage(Stage::Barrier, [&] {
          run_.group_barrier->wait();
          sg4::this_actor::sleep_for(to_seconds(run_.pipeline.barrier_latency));
        });
    }
    writes_->finish();
  }

 private:
  // Runs `body`, its time counted to stage `s` (and to the timeline when one is recorded).
  template <typename F>
  void stage(Stage s, F&& body) {
    const double t0 = sim_now();
    body();
    const double t1 = sim_now();
    StageSeconds& st = run_.stages[rank_];
    double* into[kStages] = {&st.cap_wait, &st.h2d, &st.gather, &st.gpu_ops, &st.barrier};
    *into[static_cast<std::size_t>(s)] += t1 - t0;
    if (run_.timeline != nullptr) run_.timeline->stage(rank_, s, t0 - run_.start, t1 - run_.start);
  }

  void go_to(sg4::Host* host) {
    if (sg4::this_actor::get_host() != host) sg4::this_actor::set_host(host);
  }

  // The H2D copy of a task's local shard (FSDP CPU offload), started; null without offload.
  sg4::CommPtr copy_in(const PipelineTask& t) {
    if (!run_.pipeline.cpu_offload) return nullptr;
    go_to(run_.fabric.host_memory(rank_));
    return sg4::Mailbox::by_name(run_.fabric.compute(rank_)->get_name())->put_async(&run_, t.local_bytes);
  }

  // A blocking transfer `from` -> `to`.
  void transfer(sg4::Host* from, const sg4::Host* to, std::uint64_t bytes) {
    go_to(from);
    const double t0 = sim_now();
    sg4::Mailbox::by_name(to->get_name())->put(&run_, bytes);
    if (run_.timeline != nullptr && from == run_.fabric.nic(rank_))
      run_.timeline->sent(rank_, static_cast<double>(bytes), t0 - run_.start, sim_now() - run_.start);
  }

  TransferRun& run_;
  std::uint32_t rank_;
  std::unique_ptr<TrainerWrites> writes_;
};

}  // namespace

std::shared_ptr<void> spawn_gpu_driver(TransferRun& run) {
  const GpuFabric& f = run.fabric;
  for (std::uint32_t g = 0; g < run.trainers + run.rollouts; ++g) {
    std::vector<sg4::Host*> landing{f.nic(g)};
    if (g < run.trainers) landing = {f.nic(g), f.nvlink(g), f.compute(g)};
    for (sg4::Host* h : landing) start_permanent_receiver(h, sg4::Mailbox::by_name(h->get_name()));
  }
  auto gpus = std::make_shared<std::vector<TrainerGpu>>();
  gpus->reserve(run.trainers);  // the actors hold references into it
  for (std::uint32_t r = 0; r < run.trainers; ++r) {
    TrainerGpu& gpu = gpus->emplace_back(run, r);
    sg4::Actor::create("trainer" + std::to_string(r), f.compute(r), [&gpu] { gpu(); });
  }
  return gpus;
}

}  // namespace railcheck::sim
