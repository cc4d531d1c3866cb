#include "backends/sim/routing/weight_transfer_sim.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "backends/sim/routing/weight_transfer_run.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {

std::string_view to_string(WriteQueues q) { return q == WriteQueues::PerPeer ? "per-peer" : "per-write"; }

std::optional<WriteQueues> parse_write_queues(std::string_view name) {
  for (WriteQueues q : {WriteQueues::PerPeer, WriteQueues::PerWrite})
    if (name == to_string(q)) return q;
  return std::nullopt;
}

namespace {

// SimGrid 3.32's time-advance signal has no disconnect, so it is connected once per process and
// calls whichever watcher the running simulation installed (none between runs).
std::function<void()>* current_watch = nullptr;

class TimeAdvanceWatch {
 public:
  explicit TimeAdvanceWatch(std::function<void()> watch) : watch_(std::move(watch)) {
    static std::once_flag connected;
    std::call_once(connected, [] {
      sg4::Engine::on_time_advance_cb([](double) {
        if (current_watch != nullptr) (*current_watch)();
      });
    });
    current_watch = &watch_;
  }
  ~TimeAdvanceWatch() { current_watch = nullptr; }
  TimeAdvanceWatch(const TimeAdvanceWatch&) = delete;
  TimeAdvanceWatch& operator=(const TimeAdvanceWatch&) = delete;

 private:
  std::function<void()> watch_;
};

}  // namespace

Result<bool> wire_mode_fits(WireMode wire, const PipelineParams& pipeline) {
  if (wire == WireMode::Sendto && (pipeline.write_queues != WriteQueues::PerWrite || pipeline.prefetch_h2d))
    return Error{
        "RAILCHECK_SIM_WIRE=sendto runs the driver from before issue 15, which models only write_queues = "
        "\"per-write\" without prefetch_h2d",
        "set pipeline.write_queues = \"per-write\" and pipeline.prefetch_h2d = false in the spec, or unset "
        "RAILCHECK_SIM_WIRE"};
  return true;
}

WeightTransferResult simulate_weight_transfer(const WeightTransferInput& in, const FabricParams& fabric_params,
                                              const PipelineParams& pipeline, WireMode wire,
                                              const TransferProgress& progress, TransferTimeline* timeline) {
  if (auto fits = wire_mode_fits(wire, pipeline); !fits) throw std::invalid_argument(fits.error().what);
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
  if (timeline != nullptr) {
    *timeline = TransferTimeline(trainers, rollouts, timeline->bin_s);
    run.timeline = timeline;
  }
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
  std::optional<TimeAdvanceWatch> watch;
  if (progress.report) {
    const auto t0 = std::chrono::steady_clock::now();
    watch.emplace([&run, &progress, &out, t0, last = 0.0]() mutable {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (wall - last < progress.every_s) return;
      last = wall;
      progress.report(sim_now() - run.start, run.landed_writes, out.writes, wall);
    });
  }
  engine->run();
  watch.reset();

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
