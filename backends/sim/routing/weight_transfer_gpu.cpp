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
    StageSeconds& st = run_.stages[rank_];
    for (std::size_t g = 0; g < run_.tasks.size(); ++g) {
      for (const PipelineTask& t : run_.tasks[g][rank_]) {
        timed(st.cap_wait, [&] { writes_->hold(t.tmp_bytes); });
        if (run_.pipeline.cpu_offload)
          timed(st.h2d, [&] { transfer(run_.fabric.host_memory(rank_), run_.fabric.compute(rank_), t.local_bytes); });
        timed(st.gather, [&] {
          ring_gather(run_, rank_, t,
                      [this](sg4::Host* from, const sg4::Host* to, std::uint64_t b) { transfer(from, to, b); });
        });
        timed(st.gpu_ops, [&] {
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
      timed(st.barrier, [&] {
        run_.group_barrier->wait();
        sg4::this_actor::sleep_for(to_seconds(run_.pipeline.barrier_latency));
      });
    }
    writes_->finish();
  }

 private:
  void go_to(sg4::Host* host) {
    if (sg4::this_actor::get_host() != host) sg4::this_actor::set_host(host);
  }

  // A blocking transfer `from` -> `to`.
  void transfer(sg4::Host* from, const sg4::Host* to, std::uint64_t bytes) {
    go_to(from);
    sg4::Mailbox::by_name(to->get_name())->put(&run_, bytes);
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
