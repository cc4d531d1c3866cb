// ncclLaunchPrepare's plan loop for one rank (rank_scheduler.hpp).
#include "engine/plan/rank_scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/engine_assert.hpp"
#include "engine/plan/channel_count.hpp"
#include "engine/plan/channel_picker.hpp"
#include "engine/plan/p2p_channels.hpp"

namespace railcheck::plan {

RankScheduler::RankScheduler(const CommShape& shape, const SchedulePolicy& policy, std::uint32_t rank)
    : shape_(shape), policy_(policy), rank_(rank) {
  schedule_.rank = rank;
}

Result<RankScheduler::Queues> RankScheduler::enqueue(const TaskGroup& group) const {
  for (const auto& t : group.p2ps) {
    if (t.peer >= shape_.nranks)
      return Error{fmt::format("rank {}: {} peer {} is outside the communicator of {} ranks", rank_,
                               t.dir == P2pDir::Send ? "send to" : "recv from", t.peer, shape_.nranks),
                   "check the trace's peer numbers"};
  }
  Queues q{{},
           PeerQueues(shape_.nranks, group.p2ps, P2pDir::Send),
           PeerQueues(shape_.nranks, group.p2ps, P2pDir::Recv),
           group.p2ps.size(),
           0};
  for (const auto& t : group.colls) {
    q.colls.push_back(t);
    q.coll_bytes_total += t.bytes();
  }
  return q;
}

KernelPlan RankScheduler::new_plan(std::uint32_t group, const std::vector<std::uint64_t>& loads) const {
  KernelPlan plan;
  plan.index = static_cast<std::uint32_t>(schedule_.plans.size());
  plan.group = group;
  plan.persistent = shape_.persistent;
  plan.channels.resize(std::max(shape_.coll_channels, shape_.p2p_channels));
  for (std::size_t c = 0; c < loads.size(); ++c) plan.channels[c].coll_bytes = loads[c];
  return plan;
}

// PassSm (seed §2.a): the p2p copies are issued before the plan loop, on the channels the p2p
// mapping gives, and their bytes count on those channels' loads until they finish. Those
// loads depend on this rank's own p2p tasks, which is why ranks stop agreeing.
std::vector<std::uint64_t> RankScheduler::pre_schedule_p2p(Queues& q, bool done_before_end) const {
  std::vector<std::uint64_t> loads(shape_.coll_channels, 0);
  for (std::uint32_t peer = 0; peer < shape_.nranks; ++peer) {
    for (auto dir : {P2pDir::Send, P2pDir::Recv}) {
      auto& queues = dir == P2pDir::Send ? q.sends : q.recvs;
      const auto round = dir == P2pDir::Send ? p2p_round_of_send(rank_, peer, shape_.nranks)
                                             : p2p_round_of_recv(rank_, peer, shape_.nranks);
      for (const auto& t : queues.pending(peer)) {
        const auto parts = p2p_parts(shape_, t.bytes);
        for (std::uint32_t part = 0; part < parts; ++part) {
          const auto c = p2p_channel(shape_, round, part);
          if (!done_before_end && c < loads.size()) loads[c] += t.bytes / parts;
        }
      }
      q.p2p_left -= queues.pending(peer).size();
      queues.clear(peer);
    }
  }
  return loads;
}

void RankScheduler::drain_colls(Queues& q, KernelPlan& plan, WorkBudget& budget, std::uint64_t bytes_per_channel) {
  while (!q.colls.empty()) {
    const CollTask& t = q.colls.front();
    const auto n_bid = coll_channel_count(shape_, t, bytes_per_channel);
    if (!budget.fits(n_bid)) return;  // "Ensure room for addCollToPlan()"
    CollPlacement placed;
    placed.coll_seq = next_coll_seq_++;
    placed.group = plan.group;
    placed.plan = plan.index;
    placed.task = t;
    for (std::uint32_t c = 0; c < shape_.coll_channels; ++c) placed.loads_before.push_back(plan.channels[c].coll_bytes);
    placed.channels = pick_least_loaded(placed.loads_before, n_bid);
    if (!RAILCHECK_ASSERT(placed.channels.size() == n_bid, "a collective gets the channel count it bid for")) return;
    for (std::uint32_t bid = 0; bid < n_bid; ++bid) {
      auto& ch = plan.channels[placed.channels[bid]];
      ch.coll_bytes += t.bytes() / n_bid;
      ch.work.push_back(WorkItem{WorkItem::Kind::Coll, placed.coll_seq, bid, {}, {}});
    }
    budget.spend(n_bid);
    plan.work_items += n_bid;
    schedule_.colls.push_back(std::move(placed));
    q.colls.pop_front();
  }
}

// 2.18 scheduleP2pTasksToPlan: sweep the rounds, pairing the send to rank+i with the receive
// from rank-i, until every p2p task is placed or the budget runs out.
void RankScheduler::drain_p2p(Queues& q, KernelPlan& plan, WorkBudget& budget) const {
  const auto n = shape_.nranks;
  while (q.p2p_left != 0) {
    for (std::uint32_t round = 0; round < n; ++round) {
      const std::uint32_t to = (rank_ + round) % n;
      const std::uint32_t from = (rank_ + n - round) % n;
      const bool has_send = !q.sends.empty(to);
      const bool has_recv = !q.recvs.empty(from);
      if (!has_send && !has_recv) continue;
      const auto send_parts = has_send ? p2p_parts(shape_, q.sends.front(to).bytes) : 0;
      const auto recv_parts = has_recv ? p2p_parts(shape_, q.recvs.front(from).bytes) : 0;
      const auto parts = std::max(send_parts, recv_parts);
      RAILCHECK_ASSERT(parts >= 1, "a round with a send or a receive places one work item at least");
      if (!budget.fits(parts)) return;
      for (std::uint32_t part = 0; part < parts; ++part) {
        WorkItem item{WorkItem::Kind::P2p, 0, 0, {}, {}};
        if (part < send_parts) item.send = P2pHalf{true, to, q.sends.front(to).bytes / send_parts, part};
        if (part < recv_parts) item.recv = P2pHalf{true, from, q.recvs.front(from).bytes / recv_parts, part};
        plan.channels[p2p_channel(shape_, round, part)].work.push_back(item);
      }
      budget.spend(parts);
      plan.work_items += parts;
      if (has_send) q.sends.pop(to);
      if (has_recv) q.recvs.pop(from);
      const std::size_t placed = (send_parts != 0) + (recv_parts != 0);
      if (!RAILCHECK_ASSERT(placed <= q.p2p_left, "a p2p task is placed once")) return;
      q.p2p_left -= placed;
    }
  }
}

Result<std::uint32_t> RankScheduler::launch(const TaskGroup& group) {
  auto queues = enqueue(group);
  if (!queues) return queues.error();
  Queues& q = queues.value();
  const auto group_index = next_group_++;
  const auto bytes_per_channel = plan::bytes_per_channel(shape_, q.coll_bytes_total);
  std::vector<std::uint64_t> loads;
  if (policy_.p2p_pre_scheduled && q.p2p_left != 0) loads = pre_schedule_p2p(q, group.p2p_done_before_end);

  std::uint32_t made = 0;
  while (!q.colls.empty() || q.p2p_left != 0) {
    KernelPlan plan = new_plan(group_index, loads);
    loads.clear();  // only the first plan inherits the pre-scheduled p2p loads
    auto budget = WorkBudget::for_plan(shape_.persistent, shape_.work_fifo_depth);
    if (policy_.order == DrainOrder::CollFirst) {
      drain_colls(q, plan, budget, bytes_per_channel);
      if (q.colls.empty()) drain_p2p(q, plan, budget);
    } else {
      drain_p2p(q, plan, budget);
      if (q.p2p_left == 0) drain_colls(q, plan, budget, bytes_per_channel);
    }
    if (plan.empty())
      return Error{fmt::format("rank {}: a task of group {} needs more work items than a plan's budget of {}", rank_,
                               group_index, shape_.work_fifo_depth / 2),
                   "raise work_fifo_depth (NCCL_WORK_FIFO_DEPTH) or lower the channel count"};
    schedule_.plans.push_back(std::move(plan));
    ++made;
  }
  RAILCHECK_ASSERT(made >= 1 || (group.colls.empty() && group.p2ps.empty()),
                   "a group with a task launches one plan at least");
  return made;
}

Result<std::vector<RankSchedule>> schedule_all(const CommShape& shape, const SchedulePolicy& policy,
                                               const std::vector<RankStream>& streams) {
  std::vector<RankSchedule> out;
  out.reserve(streams.size());
  for (const auto& stream : streams) {
    RankScheduler scheduler(shape, policy, stream.rank);
    for (const auto& group : stream.groups) {
      auto made = scheduler.launch(group);
      if (!made) return made.error();
    }
    out.push_back(scheduler.take());
  }
  return out;
}

}  // namespace railcheck::plan
