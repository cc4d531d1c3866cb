// ncclLaunchPrepare's plan loop, NCCL 2.28.9 (nccl228_scheduler.hpp).
#include "engine/plan/nccl228_scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "engine/core/engine_assert.hpp"
#include "engine/plan/nccl228_coll_cells.hpp"
#include "engine/plan/nccl228_p2p.hpp"
#include "engine/plan/nccl228_prepare.hpp"
#include "engine/plan/nccl228_topo_graphs.hpp"
#include "engine/plan/nccl228_tune_model.hpp"
#include "engine/plan/nccl228_tuner.hpp"
#include "engine/plan/nccl_rank_env.hpp"

namespace railcheck::plan {
namespace {

// Sizes of the structs a plan is budgeted in (src/include/device.h, x86-64).
constexpr std::uint64_t kWorkCollBytes = 96;    // sizeof(ncclDevWorkColl)
constexpr std::uint64_t kWorkP2pBytes = 48;     // sizeof(ncclDevWorkP2p)
constexpr std::uint64_t kWorkBatchBytes = 16;   // sizeof(ncclDevWorkBatch)
constexpr std::uint64_t kKernelArgsBytes = 32;  // sizeof(ncclDevKernelArgs)
constexpr std::uint64_t kMaxBatchBytes = 1024;  // NCCL_MAX_DEV_WORK_BATCH_BYTES

enum class WorkType : std::uint8_t { P2p, Coll };

// The plan being built: per channel, the open work batch (enqueue.cc addWorkBatchToPlan), and
// the totals testBudget reads.
struct WipPlan {
  struct Channel {
    bool has_batch = false;
    WorkType type = WorkType::Coll;
    std::string func;
    std::uint64_t offset_base = 0;
    std::uint64_t batch_bytes = 0;  // wipBatch.workBytes
    std::vector<int> rounds;        // wipBatch.p2pRounds
  };
  std::vector<Channel> channels;
  std::uint64_t work_bytes = 0;
  std::uint64_t batches = 0;  // nWorkBatches
  std::uint64_t in_args = 0;
  std::uint64_t out_args = 0;

  // enqueue.cc testBudget: the batches and work fit the kernel arguments, or the batches do
  // and the work fits the FIFO half (or the persistent buffer).
  bool fits(std::uint64_t nbatches, std::uint64_t work) const {
    const std::uint64_t batch_bytes = nbatches * kWorkBatchBytes;
    return batch_bytes + work <= in_args || (batch_bytes <= in_args && work <= out_args);
  }

  // enqueue.cc addWorkBatchToPlan: a new batch when the type, function or size limit changes
  // (for p2p also 8 per batch, a round at most once, rounds of one epoch); an extension batch
  // when the work's offset does not fit the batch's 64-bit offset mask.
  void add_batch(std::uint32_t c, WorkType type, const std::string& func, std::uint64_t offset, int round) {
    Channel& ch = channels[c];
    const std::uint64_t size = type == WorkType::P2p ? kWorkP2pBytes : kWorkCollBytes;
    bool fresh = !ch.has_batch || ch.type != type || ch.func != func || kMaxBatchBytes < ch.batch_bytes + size;
    if (ch.has_batch && type == WorkType::P2p) {
      fresh = fresh || ch.rounds.size() == kMaxP2pPerBatch;
      for (int r : ch.rounds)
        fresh =
            fresh || r == round || r / static_cast<int>(kMaxP2pPerBatch) != round / static_cast<int>(kMaxP2pPerBatch);
    }
    const std::uint64_t rel = fresh ? 0 : offset - ch.offset_base;
    const bool extend = 63 * size < rel || rel % size != 0;
    if (fresh || extend) {
      ch.has_batch = true;
      ch.type = type;
      ch.func = func;
      ch.offset_base = offset;
      if (fresh) {
        ch.batch_bytes = 0;
        ch.rounds.clear();
      }
      ++batches;
    }
    ch.batch_bytes += size;
    if (type == WorkType::P2p) ch.rounds.push_back(round);
  }
};

}  // namespace

RankScheduler228::RankScheduler228(const CommShape& shape, const SchedulePolicy& policy, std::uint32_t rank,
                                   bool explain)
    : shape_(shape), policy_(policy), rank_(rank), explain_(explain) {
  schedule_.rank = rank;
  // Without NCCL's printed tables, ncclTopoTuneModel's from the graphs ncclTopoCompute would find
  // for the shape's topology, and the Ring Simple thread count that goes with them.
  if (!shape_.v228.costs) {
    const TopoFacts facts = derive_topo_facts(shape_);
    shape_.v228.costs = tune_model_2_28(shape_, facts);
    // tuning.cc ncclTopoTuneModel: getNthreads("NCCL_NTHREADS", ..., 2*WARP_SIZE, 512, topology default).
    if (!shape_.v228.max_threads_logged)
      shape_.v228.max_threads[kAlgoRing][kProtoSimple] =
          nccl_get_nthreads(shape_.v228.nthreads_env, 64, 512, ring_simple_threads(facts));
  }
}

Result<std::uint32_t> RankScheduler228::launch(const TaskGroup& group) {
  const auto group_index = next_group_++;
  for (const auto& t : group.p2ps) {
    if (t.peer >= shape_.nranks)
      return Error{fmt::format("rank {}: {} peer {} is outside the communicator of {} ranks", rank_,
                               t.dir == P2pDir::Send ? "send to" : "recv from", t.peer, shape_.nranks),
                   "check the trace's peer numbers"};
    if (t.bytes > kMaxModelBytes)
      return Error{fmt::format("rank {}: a p2p of {} bytes is beyond the 2.28 model's range", rank_, t.bytes), ""};
  }
  if (schedule_.refused) return 0u;  // NCCL failed an earlier call of this rank
  for (std::uint32_t i = 0; i < group.colls.size(); ++i) {
    const CollTask& t = group.colls[i];
    if (!t.algorithm.empty() || t.count == 0 ||
        !no_algo_proto_2_28(shape_, TuneQuery{t.op, t.redop, t.dtype, t.bytes(), 1}))
      continue;
    schedule_.refused = Refusal{
        static_cast<std::uint32_t>(schedule_.colls.size()) + i,
        fmt::format("NCCL refuses {} count {} {}: no algorithm/protocol is left by this rank's NCCL_ALGO/NCCL_PROTO "
                    "(enqueue.cc topoGetAlgoInfo: ncclInvalidUsage, \"no algorithm/protocol available for function "
                    "{}\")",
                    name(t.op), t.count, name(t.dtype), name(t.op))};
    return 0u;
  }
  auto prepared = prepare_colls_2_28(shape_, group.colls);
  if (!prepared) return prepared.error();
  std::deque<PreparedColl> colls(prepared->begin(), prepared->end());
  // Per-peer queues in issue order (ncclKernelPlanner::peers[].sendQueue / recvQueue).
  std::vector<std::deque<std::uint32_t>> sends(shape_.nranks), recvs(shape_.nranks);
  std::size_t p2p_left = 0;
  if (!policy_.p2p_pre_scheduled) {
    for (std::uint32_t i = 0; i < group.p2ps.size(); ++i) {
      (group.p2ps[i].dir == P2pDir::Send ? sends : recvs)[group.p2ps[i].peer].push_back(i);
      ++p2p_left;
    }
  }
  // Collectives are numbered in issue order across the rank's groups, as the 2.18 replay does.
  const auto coll_base = static_cast<std::uint32_t>(schedule_.colls.size());
  schedule_.colls.resize(coll_base + group.colls.size());
  for (std::uint32_t i = 0; i < group.colls.size(); ++i) {  // empty ones keep no channels
    schedule_.colls[coll_base + i].coll_seq = coll_base + i;
    schedule_.colls[coll_base + i].group = group_index;
    schedule_.colls[coll_base + i].task = group.colls[i];
  }
  const auto rounds = p2p_schedule_2_28(shape_, rank_);
  const auto range = p2p_channel_range_2_28(shape_);
  const std::uint32_t nchan = std::max(shape_.coll_channels, shape_.p2p_channels);

  std::uint32_t made = 0;
  while (!colls.empty() || p2p_left != 0) {
    KernelPlan plan;
    plan.index = static_cast<std::uint32_t>(schedule_.plans.size());
    plan.group = group_index;
    plan.persistent = shape_.persistent;
    plan.channels.resize(nchan);
    WipPlan wip;
    wip.channels.resize(nchan);
    wip.in_args = shape_.v228.work_args_bytes - kKernelArgsBytes;
    // "Non-persistent kernels fill up at most half of our fifo per kernel."
    wip.out_args = shape_.persistent ? (1ULL << 30) : shape_.v228.work_fifo_bytes / 2;
    std::uint32_t position = 0;

    auto schedule_colls = [&] {
      // scheduleCollTasksToPlan, first pass: how many collectives fit ("Rough guess: 4 colls per batch").
      std::size_t fit = 0;
      std::uint64_t work = 0, traffic = 0;
      int plan_channels = 0;
      for (const auto& c : colls) {
        if (!wip.fits((fit + 3) / 4, work + kWorkCollBytes)) break;
        ++fit;
        work += kWorkCollBytes;
        traffic += std::max(kMinTrafficPerChannel, c.traffic);
        plan_channels = std::min(plan_channels + c.max_channels, static_cast<int>(shape_.coll_channels));
      }
      CellCursor cur;
      cur.per_channel = traffic_per_channel_2_28(traffic, plan_channels);
      cur.max_channels = static_cast<int>(shape_.coll_channels);
      while (fit != 0 && !colls.empty()) {
        const PreparedColl& c = colls.front();
        const CollTask& task = group.colls[c.input];
        CellCursor next = cur;
        const CellSplit split =
            place_cells_2_28(next, c.count, c.elem_size, traffic_per_byte(task.op, shape_.nranks), c.proto == kProtoLL);
        if (!RAILCHECK_ASSERT(split.lo >= 0 && split.lo <= split.hi && split.hi < static_cast<int>(nchan),
                              "a collective's cells land on a range of the plan's channels"))
          return;
        const auto n = static_cast<std::uint64_t>(split.hi - split.lo + 1);
        // "Ensure room for worst case of one new batch per channel"
        if (!wip.fits(wip.batches + n, wip.work_bytes + kWorkCollBytes)) return;
        const CellCursor before = cur;
        cur = next;
        CollPlacement placed;
        placed.coll_seq = coll_base + c.input;
        placed.group = group_index;
        placed.plan = plan.index;
        placed.task = task;
        placed.algo = c.algo;
        placed.proto = c.proto;
        placed.warps = c.warps;
        placed.step_bytes = shape_.v228.step_bytes(c.proto);
        OpPlacement op{true, group_index, c.input, plan.index, position++, {}, c.algo, c.proto, c.warps, {}};
        for (int ch = split.lo; ch <= split.hi; ++ch) {
          const auto u = static_cast<std::uint32_t>(ch);
          wip.add_batch(u, WorkType::Coll, c.func_key, wip.work_bytes, -1);
          plan.channels[u].work.push_back(
              WorkItem{WorkItem::Kind::Coll, placed.coll_seq, static_cast<std::uint32_t>(ch - split.lo), {}, {}});
          placed.channels.push_back(u);
          op.channels.push_back(u);
        }
        if (explain_)
          op.rule = fmt::format(
              "{}; enqueue.cc scheduleCollTasksToPlan: trafficPerChannel {} over {} channel{}, {} B of traffic poured "
              "from "
              "channel {} (+{} B used) -> channel{{Lo..Hi}}={{{}..{}}}",
              c.rule, cur.per_channel, plan_channels, plan_channels == 1 ? "" : "s", c.traffic, before.channel,
              before.current, split.lo, split.hi);
        wip.work_bytes += kWorkCollBytes;
        plan.work_items += n;
        schedule_.colls[placed.coll_seq] = std::move(placed);
        if (explain_) placements_.push_back(std::move(op));
        colls.pop_front();
        --fit;
      }
    };

    auto schedule_p2p = [&]() -> Result<bool> {
      // scheduleP2pTasksToPlan: sweep the rounds until every task is placed or the budget ends.
      while (p2p_left != 0) {
        const std::size_t left_before = p2p_left;
        for (std::uint32_t round = 0; round < rounds.size(); ++round) {
          const auto to = rounds[round].send_to, from = rounds[round].recv_from;
          const bool has_send = !sends[to].empty(), has_recv = !recvs[from].empty();
          if (!has_send && !has_recv) continue;
          if (to == rank_ && has_send != has_recv)
            return Error{fmt::format("rank {}: a {} to itself without the matching {}", rank_,
                                     has_send ? "send" : "receive", has_send ? "receive" : "send"),
                         "NCCL fails this with ncclInvalidUsage (scheduleP2pTasksToPlan)"};
          if (!wip.fits(wip.batches + static_cast<std::uint64_t>(range.max), wip.work_bytes + kWorkP2pBytes))
            return true;
          const P2pTask* send = has_send ? &group.p2ps[sends[to].front()] : nullptr;
          const P2pTask* recv = has_recv ? &group.p2ps[recvs[from].front()] : nullptr;
          const bool self = to == rank_;
          const auto s = p2p_split_2_28(shape_, range, send ? static_cast<std::int64_t>(send->bytes) : -1, self);
          const auto r = p2p_split_2_28(shape_, range, recv ? static_cast<std::int64_t>(recv->bytes) : -1, self);
          const std::uint32_t base = p2p_channel_base_2_28(shape_, round);
          const int parts = std::max(s.channels, r.channels);
          RAILCHECK_ASSERT(parts >= 1 && (send == nullptr || s.channels >= 1) && (recv == nullptr || r.channels >= 1),
                           "a round's send and receive each take one channel at least");
          OpPlacement send_op{false, group_index, has_send ? sends[to].front() : 0, plan.index, 0, {}, -1, -1, 0, {}};
          OpPlacement recv_op{false, group_index, has_recv ? recvs[from].front() : 0, plan.index, 0, {}, -1, -1, 0, {}};
          for (int part = 0; part < parts; ++part) {
            const std::uint32_t ch = (base + static_cast<std::uint32_t>(part)) & (shape_.p2p_channels - 1);
            wip.add_batch(ch, WorkType::P2p, "p2p", wip.work_bytes, static_cast<int>(round));
            WorkItem item{WorkItem::Kind::P2p, 0, 0, {}, {}};
            const auto upart = static_cast<std::uint32_t>(part);
            if (part < s.channels) {
              item.send =
                  P2pHalf{true, to, send->bytes / static_cast<std::uint64_t>(s.channels), upart, s.buffer_bytes};
              send_op.channels.push_back(ch);
            }
            if (part < r.channels) {
              item.recv = P2pHalf{true, from, recv->bytes / static_cast<std::uint64_t>(r.channels), upart};
              recv_op.channels.push_back(ch);
            }
            plan.channels[ch].work.push_back(item);
            ++plan.work_items;
          }
          wip.work_bytes += kWorkP2pBytes;
          const std::string where = !explain_ ? std::string()
                                              : fmt::format(
                                                    "enqueue.cc scheduleP2pTasksToPlan: round {} of init.cc "
                                                    "ncclP2pSchedule (send to {}, recv from {}), "
                                                    "channel.h ncclP2pChannelBaseForRound: base {}; ",
                                                    round, to, from, base);
          if (send) {
            send_op.position = position++;
            if (explain_) {
              send_op.rule = where + describe(s, static_cast<std::int64_t>(send->bytes), range);
              placements_.push_back(std::move(send_op));
            }
            sends[to].pop_front();
            RAILCHECK_ASSERT(p2p_left > 0, "a p2p task is placed once");
            --p2p_left;
          }
          if (recv) {
            recv_op.position = position++;
            if (explain_) {
              recv_op.rule = where + describe(r, static_cast<std::int64_t>(recv->bytes), range);
              placements_.push_back(std::move(recv_op));
            }
            recvs[from].pop_front();
            RAILCHECK_ASSERT(p2p_left > 0, "a p2p task is placed once");
            --p2p_left;
          }
        }
        if (p2p_left == left_before)
          return Error{
              fmt::format("rank {}: {} p2p tasks name peers no round of the p2p schedule reaches", rank_, p2p_left),
              "nranks must be a multiple of the node count"};
      }
      return true;
    };

    // "Drain coll tasks first ... And only drain p2p tasks once colls are depleted."
    if (policy_.order == DrainOrder::CollFirst) {
      if (!colls.empty()) schedule_colls();
      if (colls.empty() && p2p_left != 0)
        if (auto ok = schedule_p2p(); !ok) return ok.error();
    } else {
      if (p2p_left != 0)
        if (auto ok = schedule_p2p(); !ok) return ok.error();
      if (p2p_left == 0 && !colls.empty()) schedule_colls();
    }
    if (wip.work_bytes == 0)
      return Error{fmt::format("rank {}: group {} has a task no empty plan can hold", rank_, group_index),
                   "raise work_fifo_depth / NCCL_WORK_FIFO_BYTES"};
    RAILCHECK_ASSERT(plan.work_items > 0, "a plan that spent work bytes holds a work item");
    schedule_.plans.push_back(std::move(plan));
    ++made;
  }
  RAILCHECK_ASSERT(colls.empty() && p2p_left == 0, "a launch places every task of its group");
  return made;
}

Result<Schedules228> schedule_all_2_28(const CommShape& shape, const SchedulePolicy& policy,
                                       const std::vector<RankStream>& streams, bool explain,
                                       const std::vector<CommShape>& rank_shapes) {
  Schedules228 out;
  for (const auto& stream : streams) {
    const CommShape& own = stream.rank < rank_shapes.size() ? rank_shapes[stream.rank] : shape;
    RankScheduler228 scheduler(own, policy, stream.rank, explain);
    for (const auto& group : stream.groups) {
      auto made = scheduler.launch(group);
      if (!made) return made.error();
    }
    out.schedules.push_back(scheduler.take_schedule());
    out.placed.push_back(scheduler.take_placements());
  }
  return out;
}

}  // namespace railcheck::plan
