#pragma once
// A trainer GPU's RDMA writes and the temporary memory they hold (weight_transfer_gpu.cpp).
// A task holds its memory from before its H2D copy until its last write lands. How the writes
// share the fabric is PipelineParams::write_queues:
//   - PerPeer: one RC queue pair per (trainer GPU, rollout GPU). A queue pair puts its writes on
//     the wire one after another, in the order posted (InfiniBand executes the work requests of a
//     send queue in order), so only its head write is a flow; the fabric shares bandwidth among
//     queue pairs. A queue pair's actor lives on the trainer's NIC host and starts the next write
//     the instant the previous one lands.
//   - PerWrite: every write is a flow of its own from the moment it is posted, sharing bandwidth
//     with every other write in flight, as if each had a queue pair of its own (the model before
//     2026-11-25). The GPU takes landings with wait_any when it next needs memory.
// Both give back a task's memory at the instant its last write lands (PerWrite: counted from the
// GPU's next check, which comes before it needs memory, so the same instants).
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/sim/routing/weight_transfer_run.hpp"

namespace railcheck::sim {

class TrainerWrites {
 public:
  TrainerWrites(TransferRun& run, std::uint32_t rank) : run_(run), rank_(rank) {}
  virtual ~TrainerWrites() = default;
  TrainerWrites(const TrainerWrites&) = delete;
  TrainerWrites& operator=(const TrainerWrites&) = delete;

  // Waits until `bytes` more fit under the cap, then holds them. A task larger than the cap
  // runs alone rather than never.
  virtual void hold(std::uint64_t bytes) = 0;
  // Holds `bytes` if they fit now; never waits (a prefetch must not wait on memory that only the
  // task it runs beside can give back).
  virtual bool try_hold(std::uint64_t bytes) = 0;
  // Posts the task's writes (send() each); the caller is on the trainer's NIC host. The task's
  // memory comes back when its last write lands (at once when it has none).
  void post(std::size_t group, const PipelineTask& t);
  // After the trainer's last task; every write lands before the run ends.
  virtual void finish() = 0;

 protected:
  // Puts one write of task `task` (an index for landed()) on its way.
  virtual void send(std::size_t task, const routing::WeightWrite& w) = 0;

  // A task that posted writes, holding its memory until the last one lands.
  struct Held {
    std::uint64_t bytes;
    std::uint32_t writes_left;
    std::size_t group;
  };

  bool fits(std::uint64_t bytes) const { return held_tasks_ == 0 || used_ + bytes <= run_.pipeline.max_tmp_bytes; }
  void take(std::uint64_t bytes);
  void give(std::uint64_t bytes);
  // One of the task's writes landed at `finish` (simulated seconds); true when it was the last.
  bool landed(std::size_t task, double finish);

  TransferRun& run_;
  std::uint32_t rank_;

 private:
  std::uint64_t used_ = 0;
  std::uint32_t held_tasks_ = 0;
  std::vector<Held> held_;  // every task that posted writes, in issue order
};

std::unique_ptr<TrainerWrites> per_peer_writes(TransferRun& run, std::uint32_t rank);
std::unique_ptr<TrainerWrites> per_write_writes(TransferRun& run, std::uint32_t rank);

}  // namespace railcheck::sim
