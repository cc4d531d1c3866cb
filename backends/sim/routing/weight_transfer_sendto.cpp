// The weight-transfer driver before issue 15, kept for one release behind
// RAILCHECK_SIM_WIRE=sendto: every transfer a detached host-to-host Comm::sendto, one writer actor
// per task. SimGrid 3.32 keeps every detached comm in one list that it walks at each completion
// (docs/benchmarks.md, the mailbox wire), and each writer actor costs a stack.
#include <algorithm>

#include "backends/sim/routing/weight_transfer_run.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

// A trainer GPU's temporary memory: taken before a task's H2D copy, given back when its last
// write lands (seed: tmp_bytes against max_tmp_bytes).
struct TmpMemory {
  std::uint64_t cap = 0;
  std::uint64_t used = 0;
  std::uint64_t& peak;
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
  // The last of a task's memory is free (`done`), or part of it, the task holding the rest.
  void give(std::uint64_t bytes, bool done = true) {
    std::unique_lock lock(*mutex);
    used -= bytes;
    if (done) --tasks;
    freed->notify_all();
  }
};

struct SendtoRun {
  TransferRun& run;
  std::vector<TmpMemory> memory;
};

void write_out(SendtoRun& s, std::uint32_t rank, std::size_t group, const PipelineTask& t) {
  const TransferRun& run = s.run;
  std::vector<sg4::CommPtr> comms;
  for (const routing::WeightWrite& w : t.writes)
    comms.push_back(
        sg4::Comm::sendto_async(run.fabric.nic(rank), run.fabric.nic(run.trainers + w.rollout_gpu), w.bytes));
  sg4::Comm::wait_all(comms);
  s.run.landed_writes += comms.size();
  s.memory[rank].give(run.pipeline.release_gathered ? t.send_bytes : t.tmp_bytes);
  s.run.group_end[group] = std::max(s.run.group_end[group], sim_now() - run.start);
}

void trainer_gpu(SendtoRun& s, std::uint32_t rank) {
  TransferRun& run = s.run;
  StageSeconds& st = run.stages[rank];
  for (std::size_t g = 0; g < run.tasks.size(); ++g) {
    for (const PipelineTask& t : run.tasks[g][rank]) {
      timed(st.cap_wait, [&] { s.memory[rank].take(t.tmp_bytes); });
      if (run.pipeline.cpu_offload)
        timed(st.h2d,
              [&] { sg4::Comm::sendto(run.fabric.host_memory(rank), run.fabric.compute(rank), t.local_bytes); });
      timed(st.gather, [&] {
        ring_gather(run, rank, t,
                    [](sg4::Host* from, sg4::Host* to, std::uint64_t b) { sg4::Comm::sendto(from, to, b); });
      });
      timed(st.gpu_ops, [&] {
        sg4::this_actor::sleep_for(to_seconds(run.pipeline.gpu_op_overhead) * t.tensors);
        if (t.output_bytes > 0) sg4::this_actor::execute(static_cast<double>(t.gathered_bytes + t.output_bytes));
      });
      if (t.writes.empty()) {
        s.memory[rank].give(t.tmp_bytes);
        continue;
      }
      if (run.pipeline.release_gathered) s.memory[rank].give(t.tmp_bytes - t.send_bytes, false);
      sg4::Actor::create("write", run.fabric.nic(rank), [&s, rank, g, &t] { write_out(s, rank, g, t); });
    }
    if (run.pipeline.group_barrier)
      timed(st.barrier, [&] {
        run.group_barrier->wait();
        sg4::this_actor::sleep_for(to_seconds(run.pipeline.barrier_latency));
      });
  }
}

}  // namespace

std::shared_ptr<void> spawn_sendto_driver(TransferRun& run) {
  auto s = std::make_shared<SendtoRun>(SendtoRun{run, {}});
  s->memory.reserve(run.trainers);
  for (std::uint32_t r = 0; r < run.trainers; ++r)
    s->memory.push_back(TmpMemory{run.pipeline.max_tmp_bytes, 0, run.peak_tmp[r]});
  for (std::uint32_t r = 0; r < run.trainers; ++r)
    sg4::Actor::create("trainer" + std::to_string(r), run.fabric.compute(r), [&s = *s, r] { trainer_gpu(s, r); });
  return s;
}

}  // namespace railcheck::sim
