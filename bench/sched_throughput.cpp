// Scheduling throughput and large replays (engine/plan): how many tasks per second one rank's
// scheduler places, and the wall time of a full 1024-rank replay (schedule every rank, compare
// channels, execute the plans) under nccl and passsm, measured side by side in one run.
#include <fmt/format.h>

#include <chrono>
#include <string>

#include "bench/machine_line.hpp"
#include "engine/plan/channel_agreement.hpp"
#include "engine/plan/plan_execution.hpp"
#include "engine/plan/rank_scheduler.hpp"
#include "engine/plan/sched_trace.hpp"

namespace {

using railcheck::plan::CollTask;
using railcheck::plan::CommShape;
using railcheck::plan::P2pDir;
using railcheck::plan::P2pTask;
using railcheck::plan::RankStream;
using railcheck::plan::SchedInput;
using railcheck::plan::TaskGroup;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One training step per group: an all-to-all of uneven sizes plus `colls` all-reduces.
TaskGroup step(std::uint32_t rank, std::uint32_t nranks, std::uint32_t colls) {
  TaskGroup g;
  for (std::uint32_t p = 0; p < nranks; ++p) {
    g.p2ps.push_back(P2pTask{P2pDir::Send, p, 4096ULL * (1 + p % 7), 0});
    g.p2ps.push_back(P2pTask{P2pDir::Recv, p, 4096ULL * (1 + rank % 7), 0});
  }
  for (std::uint32_t k = 0; k < colls; ++k) {
    CollTask c;
    c.count = 1 << (10 + k % 8);
    c.channels = 1 + k % 2;
    g.colls.push_back(c);
  }
  return g;
}

void bench_scheduler_throughput() {
  const CommShape shape{.nranks = 64, .coll_channels = 16, .p2p_channels = 16, .p2p_channels_per_peer = 2};
  const auto policy = railcheck::plan::policy_by_name("nccl").value();
  const TaskGroup g = step(3, shape.nranks, 64);
  const std::uint64_t tasks_per_group = g.p2ps.size() + g.colls.size();
  std::uint64_t tasks = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < 1.0) {
    railcheck::plan::RankScheduler s(shape, policy, 3);
    for (int i = 0; i < 100; ++i) {
      if (!s.launch(g).ok()) return;
      tasks += tasks_per_group;
    }
  }
  const double secs = seconds_since(t0);
  fmt::print("scheduler: {:.2f} M tasks/s (one rank, 64-rank comm, 16 channels, {} tasks per group)\n",
             tasks / secs / 1e6, tasks_per_group);
}

void bench_replay(std::uint32_t nranks, std::string_view policy_name) {
  SchedInput in;
  in.shape = CommShape{.nranks = nranks, .coll_channels = 16, .p2p_channels = 16, .p2p_channels_per_peer = 2};
  for (std::uint32_t r = 0; r < nranks; ++r) in.ranks.push_back(RankStream{r, {step(r, nranks, 8)}});
  const auto policy = railcheck::plan::policy_by_name(policy_name).value();
  // The three phases of replay(), timed apart so the report says where the time goes.
  const auto t0 = std::chrono::steady_clock::now();
  auto schedules = railcheck::plan::schedule_all(in.shape, policy, in.ranks);
  const double t_schedule = seconds_since(t0);
  if (!schedules) {
    fmt::print("replay failed: {}\n", schedules.error().message());
    return;
  }
  const auto t1 = std::chrono::steady_clock::now();
  const auto agreement = railcheck::plan::compare_channels(schedules.value());
  const double t_compare = seconds_since(t1);
  const auto t2 = std::chrono::steady_clock::now();
  const auto execution = railcheck::plan::execute_plans(schedules.value());
  const double t_execute = seconds_since(t2);
  fmt::print(
      "replay {:>4} ranks, {:<6}: {:.3f} s wall (schedule {:.3f}, compare {:.3f}, execute {:.3f}), {} work items "
      "executed, {}\n",
      nranks, policy_name, t_schedule + t_compare + t_execute, t_schedule, t_compare, t_execute, execution.items_done,
      agreement.first || !execution.completed ? "divergence/hang found" : "clean");
}

}  // namespace

int main() {
  fmt::print("sched bench: {}\n", railcheck::bench::machine_summary());
  bench_scheduler_throughput();
  for (std::uint32_t n : {128U, 1024U}) {
    bench_replay(n, "nccl");
    bench_replay(n, "passsm");
  }
  return 0;
}
