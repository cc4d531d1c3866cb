// The weight-transfer driver of issue 15: one actor per trainer GPU, no actor per task, no
// detached comm. Every transfer is a mailbox put to the permanent receiver on the host where it
// lands (wire.hpp), issued from the host it leaves: the same route, size and network model call
// as the host-to-host Comm::sendto of the sendto driver, so the same simulated instants, but
// SimGrid keeps no global list of them (docs/benchmarks.md, the mailbox wire). The actor moves
// (Actor::set_host) to the host a transfer leaves from: its PCIe host for the H2D copy, its
// NVLink or NIC host for a gather, its NIC host for the writes; GPU kernels run on its compute
// host whatever host the actor is on.
//
// The writes of a task are posted together and left in flight; the GPU takes their completions
// with wait_any when it needs temporary memory back, so memory is returned in the same order and
// at the same instants as when a writer actor per task gave it back on landing: a write's memory
// is counted free from the first check after it lands, and the GPU checks at every task.
#include <algorithm>

#include "backends/sim/routing/weight_transfer_run.hpp"
#include "backends/sim/wire.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

class TrainerGpu {
 public:
  TrainerGpu(TransferRun& run, std::uint32_t rank) : run_(run), rank_(rank) {}

  void operator()() {
    StageSeconds& st = run_.stages[rank_];
    for (std::size_t g = 0; g < run_.tasks.size(); ++g) {
      for (const PipelineTask& t : run_.tasks[g][rank_]) {
        timed(st.cap_wait, [&] { take(t.tmp_bytes); });
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
        post_writes(g, t);
      }
      timed(st.barrier, [&] {
        run_.group_barrier->wait();
        sg4::this_actor::sleep_for(to_seconds(run_.pipeline.barrier_latency));
      });
    }
    while (!writes_.empty()) land(static_cast<std::size_t>(sg4::Comm::wait_any(writes_)));
  }

 private:
  // A task's temporary memory, held until its last write lands.
  struct Held {
    std::uint64_t bytes;
    std::uint32_t writes_left;
    std::size_t group;
  };

  void go_to(sg4::Host* host) {
    if (sg4::this_actor::get_host() != host) sg4::this_actor::set_host(host);
  }

  static sg4::Mailbox* inbox(const sg4::Host* host) { return sg4::Mailbox::by_name(host->get_name()); }

  // A blocking transfer `from` -> `to`.
  void transfer(sg4::Host* from, const sg4::Host* to, std::uint64_t bytes) {
    go_to(from);
    inbox(to)->put(&run_, bytes);
  }

  // Waits until the task fits under the cap (a task larger than the cap runs alone rather than
  // never). Writes that landed since the last check are taken first, so `used_` and the peak
  // are what a per-task writer would have left.
  void take(std::uint64_t bytes) {
    while (!writes_.empty()) {
      const ssize_t i = sg4::Comm::wait_any_for(writes_, 0);
      if (i < 0) break;
      land(static_cast<std::size_t>(i));
    }
    while (held_tasks_ > 0 && used_ + bytes > run_.pipeline.max_tmp_bytes)
      land(static_cast<std::size_t>(sg4::Comm::wait_any(writes_)));
    used_ += bytes;
    ++held_tasks_;
    run_.peak_tmp[rank_] = std::max(run_.peak_tmp[rank_], used_);
  }

  void give(std::uint64_t bytes) {
    used_ -= bytes;
    --held_tasks_;
  }

  void post_writes(std::size_t group, const PipelineTask& t) {
    if (t.writes.empty()) {
      give(t.tmp_bytes);
      return;
    }
    const std::size_t task = held_.size();
    held_.push_back({t.tmp_bytes, static_cast<std::uint32_t>(t.writes.size()), group});
    go_to(run_.fabric.nic(rank_));
    for (const routing::WeightWrite& w : t.writes) {
      writes_.push_back(inbox(run_.fabric.nic(run_.trainers + w.rollout_gpu))->put_async(&run_, w.bytes));
      write_task_.push_back(task);
    }
  }

  // writes_[i] has landed.
  void land(std::size_t i) {
    Held& h = held_[write_task_[i]];
    double& end = run_.group_end[h.group];
    end = std::max(end, writes_[i]->get_finish_time() - run_.start);
    if (--h.writes_left == 0) give(h.bytes);
    writes_[i] = std::move(writes_.back());
    writes_.pop_back();
    write_task_[i] = write_task_.back();
    write_task_.pop_back();
  }

  TransferRun& run_;
  std::uint32_t rank_;
  std::uint64_t used_ = 0;
  std::uint32_t held_tasks_ = 0;
  std::vector<Held> held_;               // every task that posted writes, in issue order
  std::vector<sg4::CommPtr> writes_;     // in flight or landed and not yet taken
  std::vector<std::size_t> write_task_;  // writes_[i] belongs to held_[write_task_[i]]
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
