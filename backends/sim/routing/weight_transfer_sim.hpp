#pragma once
// Executes a weight-transfer routing table on SimGrid with the seed's pipeline (seed,
// "跨机秒传RL模型参数更新的一些后续": H2D copy, GPU ops, RDMA, barrier). Per trainer GPU, one
// actor walks its table in order:
//   1. waits until the task fits under the temporary-memory cap (a task larger than the cap
//      runs alone rather than never);
//   2. copies its local shard host -> GPU over PCIe (FSDP CPU offload);
//   3. gathers the full tensor with its gather peers: a ring all-gather over NVLink inside a
//      node or the NICs across nodes, entered and left together (it is a collective);
//   4. fuses and quantizes: a fixed per-tensor launch overhead, then a memory-bound kernel over
//      the gathered and output bytes;
//   5. posts every RDMA write of the task at once and moves on; the gathered tensor is free again
//      once a fused/quantized copy exists (PipelineParams::release_gathered), the copy the writes
//      read from when their last one lands. Each write goes on the queue pair of its (trainer,
//      rollout) pair, which sends its writes one at a time in order (PipelineParams::write_queues).
// After a mesh group's last gather every trainer enters a global barrier (Gloo over Ethernet in
// the seed, so it overlaps the group's RDMA tail), then starts the next group.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "backends/sim/routing/gpu_fabric.hpp"
#include "backends/sim/routing/transfer_timeline.hpp"
#include "backends/sim/wire_mode.hpp"
#include "engine/core/result.hpp"
#include "engine/routing/weight_routing_table.hpp"

namespace railcheck::sim {

// How a trainer's RDMA writes share the fabric (trainer_writes.hpp).
enum class WriteQueues {
  PerPeer,   // one RC queue pair per (trainer GPU, rollout GPU), its writes one at a time in order
  PerWrite,  // every write a flow of its own, as if each had a queue pair (the model before 2026-11-25)
};
std::string_view to_string(WriteQueues q);
std::optional<WriteQueues> parse_write_queues(std::string_view name);  // "per-peer" or "per-write"

struct PipelineParams {
  std::uint64_t max_tmp_bytes = 1ull << 30;  // the seed's max_tmp_bytes default (1 << 30)
  // Host-side cost per tensor of issuing full_tensor(), cat, quantize and recording and polling
  // a CUDA event from Python: the seed found most time went here. Our estimate, not measured.
  Nanos gpu_op_overhead = us(50);
  bool cpu_offload = true;        // FSDP keeps shards in host memory: H2D copy before the gather
  Nanos barrier_latency = ms(1);  // one Gloo barrier over Ethernet
  // Merge consecutive tasks of one trainer (same gather peers) until they reach this many
  // gathered bytes: fewer, larger collectives and writes. 0: one task per tensor, as the seed.
  std::uint64_t batch_bytes = 0;
  WriteQueues write_queues = WriteQueues::PerPeer;
  // Free the gathered full-precision tensor as soon as the fuse/quantize kernel has read it, so
  // only the copy the writes read from stays held until they land (what a TransferEngine-style
  // sender does: the BF16 full_tensor() is dropped once its FP8 copy exists). false: the whole
  // task stays held until its last write lands (the seed's code, and the model before issue 34).
  bool release_gathered = true;
  // Copy the next task's shard host -> GPU on a copy stream while this task gathers, when its
  // memory fits at once (FSDP's prefetch does the same). false: each copy after the previous
  // task's writes are posted (the model before issue 34). Only the GPU driver has it.
  bool prefetch_h2d = true;
  // Meet at a barrier after each mesh group (the seed's pipeline, and the model before issue 34).
  // false: go straight on to the next group. Every rank issues its collectives group by group in
  // one global order, and a mesh's members in one order within it, so no cycle of waits can form
  // without the barrier.
  bool group_barrier = false;
};

struct WeightTransferInput {
  const routing::TrainerMetadata& trainer;
  const routing::RolloutMetadata& rollout;
  std::span<const routing::WeightMapping> mappings;
  const routing::WeightRoutingTable& table;
};

// Seconds per trainer GPU, averaged over trainers: where the GPU actor's time went.
struct StageSeconds {
  double cap_wait = 0;
  double h2d = 0;
  double gather = 0;
  double gpu_ops = 0;
  double barrier = 0;
};

struct WeightTransferResult {
  double total_s = 0;               // first H2D copy to last write landed
  std::vector<double> group_end_s;  // when each mesh group's last write landed
  double ideal_s = 0;               // total bytes / the smaller side's aggregate NIC bandwidth
  double nic_bound_s = 0;           // the busiest single NIC's bytes / its bandwidth
  StageSeconds mean_stage;
  std::uint64_t peak_tmp_bytes = 0;  // largest temporary memory on one trainer GPU
  std::uint64_t tasks = 0;           // simulated tasks, after batching
  std::uint64_t writes = 0;          // simulated RDMA writes, after batching
};

// Reports on a long run: called at most every `every_s` seconds of wall time while the simulation
// runs, with the simulated seconds so far, the writes landed (as the driver has taken them), the
// writes in all and the wall seconds. Watching adds nothing to the simulation: it rides on
// SimGrid's time-advance signal, not on an actor, so the figures are the same with or without it.
struct TransferProgress {
  std::function<void(double sim_s, std::uint64_t landed, std::uint64_t writes, double wall_s)> report;
  double every_s = 2.0;
};

// Whether the driver `wire` picks models `pipeline`: the Sendto driver (before issue 15) has
// only WriteQueues::PerWrite and no prefetch_h2d. The error says what to change in the spec.
Result<bool> wire_mode_fits(WireMode wire, const PipelineParams& pipeline);

// Trainer GPUs take fabric indices [0, trainers), rollout GPUs follow; keep the trainer count a
// multiple of gpus_per_node so no node mixes the two.
// `wire` picks the driver (weight_transfer_run.hpp): Mailbox, one actor per trainer GPU whose
// transfers are mailbox puts; Sendto, the driver before issue 15 (detached sendto, one writer
// actor per task), kept for one release. The same figures either way, to 1e-12 relative. The
// pipeline must fit the driver (wire_mode_fits): else it throws std::invalid_argument
// with wire_mode_fits' message. `timeline`, when given (GPU driver only), is
// sized and filled by the run.
WeightTransferResult simulate_weight_transfer(const WeightTransferInput& in, const FabricParams& fabric,
                                              const PipelineParams& pipeline, WireMode wire = WireMode::Mailbox,
                                              const TransferProgress& progress = {},
                                              TransferTimeline* timeline = nullptr);

}  // namespace railcheck::sim
