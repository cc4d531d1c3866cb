// Channel-agreement world (channel_world.hpp).
#include "verify/plan/channel_world.hpp"

#include <fmt/format.h>

#include "engine/plan/plan_lifecycle.hpp"
#include "engine/plan/sched_replay.hpp"

namespace railcheck::plan {
namespace {

// Every sequence of 1..max_colls collectives over the allowed channel counts.
std::vector<std::vector<std::uint32_t>> coll_sequences(const ChannelWorldBound& b) {
  std::vector<std::vector<std::uint32_t>> out;
  std::vector<std::vector<std::uint32_t>> frontier = {{}};
  for (std::uint32_t len = 1; len <= b.max_colls; ++len) {
    std::vector<std::vector<std::uint32_t>> next;
    for (const auto& seq : frontier)
      for (auto bids : b.coll_channel_counts) {
        auto s = seq;
        s.push_back(bids);
        next.push_back(s);
      }
    out.insert(out.end(), next.begin(), next.end());
    frontier = std::move(next);
  }
  return out;
}

// Each rank's plans through NCCL's lifecycle in program order: prepare, launch, then the
// comm's final poll (and graph destruction for persistent plans).
std::optional<std::string> lifecycle_violation(const ReplayResult& r) {
  for (const auto& s : r.schedules) {
    PlanLifecycle life(/*launch_blocking=*/false);
    std::vector<std::uint32_t> persistent;
    for (const auto& p : s.plans) {
      auto ids = life.prepare({PlanSpec{p.persistent, true}});
      if (!ids) return ids.error().what;
      for (auto id : ids.value()) {
        if (auto ok = life.launch_kernel(id); !ok) return ok.error().what;
        if (life.host_callback_pending(id))
          if (auto ok = life.run_host_callback(id); !ok) return ok.error().what;
        if (p.persistent) persistent.push_back(id);
      }
    }
    if (auto ok = life.destroy_graph(persistent); !ok) return ok.error().what;
    if (auto ok = life.poll_callbacks(); !ok) return ok.error().what;
    if (auto ok = life.check_all_reclaimed(); !ok) return fmt::format("rank {}: {}", s.rank, ok.error().what);
  }
  return std::nullopt;
}

}  // namespace

SchedInput world_input(const CommShape& shape, const std::vector<PairTransfer>& transfers,
                       const std::vector<std::uint32_t>& colls, std::uint32_t done_mask) {
  SchedInput in;
  in.source = "model check";
  in.shape = shape;
  for (std::uint32_t r = 0; r < shape.nranks; ++r) {
    TaskGroup g;
    g.p2p_done_before_end = (done_mask >> r) & 1U;
    for (const auto& t : transfers) {
      if (t.from == r) g.p2ps.push_back(P2pTask{P2pDir::Send, t.to, t.bytes, 0});
      if (t.to == r) g.p2ps.push_back(P2pTask{P2pDir::Recv, t.from, t.bytes, 0});
    }
    for (auto bids : colls) {
      CollTask c;
      c.count = 1024;
      c.channels = bids;
      g.colls.push_back(c);
    }
    in.ranks.push_back(RankStream{r, {std::move(g)}});
  }
  return in;
}

std::optional<ChannelCounterexample> check_world(const SchedulePolicy& policy, const SchedInput& in,
                                                 std::uint32_t operations) {
  auto r = replay(in, policy, NcclVersion::V2_18);  // the bound explores 2.18's least-loaded picker
  if (!r) return ChannelCounterexample{"input", r.error().what, operations, in};
  if (r->agreement.first) return ChannelCounterexample{"agreement", r->agreement.first->explanation, operations, in};
  if (!r->execution.completed)
    return ChannelCounterexample{"progress", r->execution.hang ? r->execution.hang->describe() : "stuck", operations,
                                 in};
  if (auto v = lifecycle_violation(r.value())) return ChannelCounterexample{"lifecycle", *v, operations, in};
  return std::nullopt;
}

ChannelCheckResult check_channel_world(const SchedulePolicy& policy, const ChannelWorldBound& bound) {
  ChannelCheckResult result;
  const auto sequences = coll_sequences(bound);
  const std::uint64_t choices = bound.transfer_bytes.size() + 1;  // nothing, or one of the sizes
  for (std::uint32_t n = bound.min_ranks; n <= bound.max_ranks; ++n) {
    const std::uint32_t pairs = n * n;
    std::uint64_t pair_worlds = 1;
    for (std::uint32_t i = 0; i < pairs; ++i) pair_worlds *= choices;
    const std::uint32_t done_masks = policy.p2p_pre_scheduled ? (1U << n) : 1U;
    for (auto depth : bound.work_fifo_depths) {
      CommShape shape = bound.shape;
      shape.nranks = n;
      shape.work_fifo_depth = depth;
      for (std::uint64_t code = 0; code < pair_worlds; ++code) {
        std::vector<PairTransfer> transfers;
        std::uint64_t rest = code;
        for (std::uint32_t i = 0; i < pairs; ++i, rest /= choices)
          if (rest % choices != 0)
            transfers.push_back(PairTransfer{i / n, i % n, bound.transfer_bytes[rest % choices - 1]});
        for (const auto& seq : sequences) {
          const auto ops = static_cast<std::uint32_t>(transfers.size() + seq.size());
          for (std::uint32_t mask = 0; mask < done_masks; ++mask) {
            ++result.worlds;
            auto cx = check_world(policy, world_input(shape, transfers, seq, mask), ops);
            if (!cx) continue;
            ++result.violating_worlds;
            const bool smaller = !result.minimal || ops < result.minimal->operations ||
                                 (ops == result.minimal->operations && n < result.minimal->input.shape.nranks);
            if (smaller) result.minimal = std::move(cx);
          }
        }
      }
    }
  }
  return result;
}

std::string to_trace(const SchedInput& input) {
  const auto& s = input.shape;
  std::string out = fmt::format(
      "{{\"ev\":\"comm\",\"nranks\":{},\"coll_channels\":{},\"p2p_channels\":{},\"p2p_channels_per_peer\":{},"
      "\"work_fifo_depth\":{},\"p2p_chunk_bytes\":{},\"persistent\":{},\"nccl\":\"2.18\"}}\n",
      s.nranks, s.coll_channels, s.p2p_channels, s.p2p_channels_per_peer, s.work_fifo_depth, s.p2p_chunk_bytes,
      s.persistent);
  for (const auto& r : input.ranks) {
    for (const auto& g : r.groups) {
      out += fmt::format("{{\"rank\":{},\"ev\":\"group_start\"}}\n", r.rank);
      for (const auto& c : g.colls)
        out += fmt::format("{{\"rank\":{},\"ev\":\"coll\",\"op\":\"{}\",\"count\":{},\"dtype\":\"{}\"{}}}\n", r.rank,
                           name(c.op), c.count, name(c.dtype),
                           c.channels == 0 ? std::string() : fmt::format(",\"channels\":{}", c.channels));
      for (const auto& p : g.p2ps)
        out += fmt::format("{{\"rank\":{},\"ev\":\"{}\",\"peer\":{},\"bytes\":{}}}\n", r.rank,
                           p.dir == P2pDir::Send ? "send" : "recv", p.peer, p.bytes);
      out += fmt::format("{{\"rank\":{},\"ev\":\"group_end\",\"p2p_done\":{}}}\n", r.rank, g.p2p_done_before_end);
    }
  }
  return out;
}

}  // namespace railcheck::plan
