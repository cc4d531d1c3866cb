// The verdict on a replayed job (sched_verdict.hpp).
#include "engine/plan/sched_verdict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

namespace railcheck::plan {
namespace {

using End = RankLogEnd::End;

const RankLogEnd* end_of(const SchedInput& in, std::uint32_t rank) {
  return rank < in.rank_ends.size() ? &in.rank_ends[rank] : nullptr;
}

bool every_rank_destroyed(const SchedInput& in) {
  if (in.rank_ends.empty()) return false;
  for (const auto& e : in.rank_ends)
    if (e.end != End::Destroyed) return false;
  return true;
}

std::vector<std::uint32_t> stopped_ranks(const SchedInput& in) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < in.rank_ends.size(); ++r)
    if (in.rank_ends[r].end == End::MidRun || in.rank_ends[r].end == End::Aborted) out.push_back(r);
  return out;
}

std::string stop_text(const RankLogEnd& e, std::uint32_t rank) {
  return fmt::format("rank {}'s log ({}) {} after its last COLL line {}", rank, e.file,
                     e.end == End::Aborted ? "ends in Abort COMPLETE (the communicator was aborted, e.g. by a watchdog)"
                                           : "ends mid-run (no Destroy COMPLETE: the process was killed or is stuck)",
                     e.last_op_line);
}

// What made two ranks' plans differ: the settings that differ and bear on the field, else the
// INIT facts that do, else nothing the model reads.
std::vector<std::string> causes(const SchedInput& in, const Divergence& d) {
  std::vector<std::string> out;
  const auto a = d.rank_a, b = d.rank_b;
  if (a < in.rank_env.size() && b < in.rank_env.size())
    for (auto& s : differing_settings(in.rank_env[a], a, in.rank_env[b], b, d.field)) out.push_back("cause: " + s);
  if (out.empty() && a < in.rank_shapes.size() && b < in.rank_shapes.size()) {
    const CommShape& x = in.rank_shapes[a];
    const CommShape& y = in.rank_shapes[b];
    if (x.coll_channels != y.coll_channels)
      out.push_back(fmt::format("cause: rank {} has {} coll channels, rank {} has {} (each rank's INIT lines)", b,
                                y.coll_channels, a, x.coll_channels));
    if (x.v228.step_bytes(kProtoSimple) != y.v228.step_bytes(kProtoSimple) ||
        x.v228.step_bytes(kProtoLL) != y.v228.step_bytes(kProtoLL))
      out.push_back(fmt::format("cause: the ranks' buffer sizes differ (Simple {} vs {} B per step)",
                                y.v228.step_bytes(kProtoSimple), x.v228.step_bytes(kProtoSimple)));
  }
  return out;
}

void divergent(SchedVerdict& v, const SchedInput& in, const ReplayResult& r) {
  const Divergence& d = *r.agreement.first;
  v.kind = SchedVerdict::Kind::Divergent;
  if (d.kind == Divergence::Kind::Sequence) {
    v.lines.push_back(fmt::format("DIVERGENT: ranks {} and {} issued different operations at collective #{}: {}",
                                  d.rank_a, d.rank_b, d.coll_seq, d.explanation));
    // A rank that issued nothing there: say whether its log shows it stopping.
    for (const auto rank : {d.rank_a, d.rank_b}) {
      const bool issued = rank < r.schedules.size() && d.coll_seq < r.schedules[rank].colls.size();
      const RankLogEnd* e = end_of(in, rank);
      if (!issued && e != nullptr && (e->end == End::MidRun || e->end == End::Aborted))
        v.lines.push_back(fmt::format(
            "cause: rank {} stopped issuing NCCL calls: {}; it died, was stopped outside NCCL, or waited on something "
            "the other ranks did not",
            rank, stop_text(*e, rank)));
    }
    return;
  }
  if (d.kind == Divergence::Kind::LoggedLines) {
    v.lines.push_back(fmt::format("DIVERGENT: {}", d.explanation));
    return;
  }
  v.lines.push_back(fmt::format("DIVERGENT: collective #{}: ranks {} and {} run different plans ({}): {}", d.coll_seq,
                                d.rank_a, d.rank_b, name(d.field), d.explanation));
  for (auto& c : causes(in, d)) v.lines.push_back(std::move(c));
  v.lines.push_back(
      "NCCL runs each channel's blocks of all ranks as one ring or tree: ranks that disagree on it hang there or "
      "exchange misframed data (wrong values)");
}

// Ranks whose communicators differ before any collective: NCCL connects every channel of a ring
// or tree on its first use (runtime connect) and exchanges per-channel connection data, so ranks
// with other channel counts fail or hang there (recorded on 2.28.9: NCCL_MAX_NCHANNELS=4 on one of
// two NVLink ranks, "Message truncated : received 12288 bytes instead of 2048" at the first call).
bool communicator_differs(SchedVerdict& v, const SchedInput& in) {
  for (std::uint32_t b = 1; b < in.rank_shapes.size(); ++b) {
    const CommShape& x = in.rank_shapes[0];
    const CommShape& y = in.rank_shapes[b];
    if (x.coll_channels == y.coll_channels && x.p2p_channels == y.p2p_channels) continue;
    v.kind = SchedVerdict::Kind::Divergent;
    v.lines.push_back(fmt::format(
        "DIVERGENT: before collective #0: ranks 0 and {} built different communicators: rank 0 has {} coll / {} p2p "
        "channels, rank {} has {} / {} (each rank's INIT lines, else its settings)",
        b, x.coll_channels, x.p2p_channels, b, y.coll_channels, y.p2p_channels));
    const Divergence d{Divergence::Kind::Plan, 0, 0, b, "", PlanField::Channels};
    for (auto& c : causes(in, d)) v.lines.push_back(std::move(c));
    v.lines.push_back(
        "NCCL connects every channel of a ring or tree on its first collective and exchanges each channel's "
        "connection data: ranks that disagree on the count fail or hang at the first collective");
    return true;
  }
  return false;
}

// A p2p send whose two ends frame it differently. Over the network the receiver posts buffers of
// its own step (P2P Chunksize under Simple, buffSizes[LL] / NCCL_STEPS under LL: src/enqueue.cc
// addP2pToPlan, src/init.cc computeBuffSizes) and the sender sends its own: recorded on 2.28.9,
// NCCL_P2P_NET_CHUNKSIZE=65536 on one of two NET ranks made the 1 MiB send/recv ring return wrong
// values on one rank and "NET/Socket : ... message truncated : receiving 131072 bytes instead of
// 65536" on the other. Over NVLink P2P the chunk does not matter (recorded:
// NCCL_P2P_NVL_CHUNKSIZE=131072 on one rank, every value right), so only network pairs are held.
struct P2pMismatch {
  std::uint32_t from = 0, to = 0;
  std::uint32_t colls_before = 0;  // the sender's collectives issued before it
  std::uint64_t bytes = 0;
  std::string what;
};

bool over_network(const SchedInput& in, std::uint32_t a, std::uint32_t b) {
  if (!in.net_links.empty()) return in.net_links.count({std::min(a, b), std::max(a, b)}) != 0;
  const auto n = static_cast<std::uint32_t>(in.rank_shapes.size());
  return n != 0 && in.rank_shapes[a].v228.nodes(n) == n;  // one rank per node: every pair crosses the network
}

std::optional<P2pMismatch> p2p_framing_differs(const SchedInput& in) {
  const auto n = static_cast<std::uint32_t>(in.rank_shapes.size());
  auto frame = [](const CommShape& s, std::uint64_t bytes) {
    const bool ll = bytes <= s.v228.p2p_ll_threshold;
    return std::make_tuple(ll, ll ? s.v228.step_bytes(kProtoLL) : s.v228.p2p_chunk_bytes, s.p2p_channels_per_peer);
  };
  std::optional<P2pMismatch> first;
  for (const auto& stream : in.ranks) {
    std::uint32_t colls = 0;
    for (const auto& g : stream.groups) {
      for (const auto& t : g.p2ps) {
        if (t.dir != P2pDir::Send || t.peer == stream.rank || t.peer >= n || stream.rank >= n) continue;
        if (!over_network(in, stream.rank, t.peer)) continue;
        const auto [ll_a, step_a, per_peer_a] = frame(in.rank_shapes[stream.rank], t.bytes);
        const auto [ll_b, step_b, per_peer_b] = frame(in.rank_shapes[t.peer], t.bytes);
        if (ll_a == ll_b && step_a == step_b && per_peer_a == per_peer_b) continue;
        if (first && first->colls_before <= colls) continue;
        first = P2pMismatch{
            stream.rank, t.peer, colls, t.bytes,
            fmt::format("rank {} sends it over the network in {} steps of {} B on {} channel(s) per peer, rank {} "
                        "receives {} steps of {} B on {}",
                        stream.rank, ll_a ? "LL" : "Simple", step_a, per_peer_a, t.peer, ll_b ? "LL" : "Simple", step_b,
                        per_peer_b)};
      }
      colls += static_cast<std::uint32_t>(g.colls.size());
    }
  }
  return first;
}

void p2p_divergent(SchedVerdict& v, const SchedInput& in, const P2pMismatch& m) {
  v.kind = SchedVerdict::Kind::Divergent;
  v.lines.push_back(fmt::format("DIVERGENT: the p2p send of {} B from rank {} to rank {} {}: {}", m.bytes, m.from, m.to,
                                m.colls_before == 0 ? std::string("before collective #0")
                                                    : fmt::format("after collective #{}", m.colls_before - 1),
                                m.what));
  const Divergence d{Divergence::Kind::Plan, m.colls_before, m.to, m.from, "", PlanField::P2p};
  for (auto& c : causes(in, d)) v.lines.push_back(std::move(c));
  v.lines.push_back(
      "NCCL's network receiver posts buffers of its own step size: the transfer is truncated or lands misframed "
      "(an error on one end, wrong values on the other)");
}

// The first collective NCCL refuses on some rank, if it comes before `before` (the first divergence).
bool refused_first(SchedVerdict& v, const SchedInput& in, const ReplayResult& r, std::uint32_t before) {
  const RankSchedule* first = nullptr;
  std::vector<std::uint32_t> ranks;
  for (const auto& s : r.schedules) {
    if (!s.refused || s.refused->coll_seq > before) continue;
    if (first == nullptr || s.refused->coll_seq < first->refused->coll_seq) {
      first = &s;
      ranks.clear();
    }
    if (s.refused->coll_seq == first->refused->coll_seq) ranks.push_back(s.rank);
  }
  if (first == nullptr) return false;
  v.kind = SchedVerdict::Kind::Divergent;
  v.lines.push_back(fmt::format("FAILS: collective #{} on rank{} {}: {}", first->refused->coll_seq,
                                ranks.size() == 1 ? "" : "s", fmt::join(ranks, ", "), first->refused->what));
  if (first->rank < in.rank_env.size())
    for (std::string_view var : {"NCCL_ALGO", "NCCL_PROTO"})
      if (in.rank_env[first->rank].find(var) != nullptr)
        v.lines.push_back(fmt::format("cause: rank {}: {}", first->rank, in.rank_env[first->rank].describe(var)));
  return true;
}

}  // namespace

std::string_view name(SchedVerdict::Kind k) {
  switch (k) {
    case SchedVerdict::Kind::Healthy: return "HEALTHY";
    case SchedVerdict::Kind::Divergent: return "DIVERGENT";
    case SchedVerdict::Kind::Inconclusive: return "INCONCLUSIVE";
  }
  return "?";
}

Result<PolicyVerdict> replay_and_judge(const SchedInput& as_logged, const SchedInput* each_operation,
                                       const SchedulePolicy& policy, NcclVersion nccl) {
  auto first = replay(as_logged, policy, nccl);
  if (!first) return first.error();
  PolicyVerdict out{std::move(first).value(), std::nullopt, false, {}};
  if (each_operation != nullptr)
    // A reading that cannot be replayed is not weighed: the first one's verdict stands.
    if (auto other = replay(*each_operation, policy, nccl); other) out.each_operation = std::move(other).value();
  out.show_each_operation = out.each_operation.has_value() && out.as_logged.violation();
  out.verdict = judge(as_logged, out.as_logged, out.each_operation ? &*out.each_operation : nullptr);
  return out;
}

SchedVerdict::Kind worse(SchedVerdict::Kind a, SchedVerdict::Kind b) {
  auto rank = [](SchedVerdict::Kind k) {
    return k == SchedVerdict::Kind::Divergent ? 2 : k == SchedVerdict::Kind::Inconclusive ? 1 : 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

bool refused_anywhere(const ReplayResult& r) {
  for (const auto& s : r.schedules)
    if (s.refused) return true;
  return false;
}

bool faulty(const ReplayResult& r) { return r.violation() || refused_anywhere(r); }

SchedVerdict judge(const SchedInput& input, const ReplayResult& as_logged, const ReplayResult* each_operation) {
  SchedVerdict v;
  if (communicator_differs(v, input)) return v;
  // Where the log cannot show launch boundaries, the reading it seems to give (one launch per
  // opCount) lumps every operation of a P2P/SHM rank into one launch, which PyTorch never issues
  // outside batches; each operation its own launch is what it issues otherwise. A fault only the
  // first reading has is a guess at the boundaries, not a fact about the job.
  if (each_operation != nullptr && faulty(as_logged) && !faulty(*each_operation)) {
    if (every_rank_destroyed(input)) {
      v.lines.push_back(
          "HEALTHY: the divergence above follows from launch boundaries this log cannot show (see the notes); with "
          "each operation its own launch every rank agrees and every plan completes, and every rank's log ends in "
          "Destroy COMPLETE: the job completed, which the diverging reading cannot explain");
      return v;
    }
    v.kind = SchedVerdict::Kind::Inconclusive;
    v.lines.push_back(
        "INCONCLUSIVE: the divergence above follows from launch boundaries this log cannot show (see the notes); with "
        "each operation its own launch, as PyTorch issues them, every rank agrees and every plan completes");
    v.lines.push_back(
        "to settle it: record with the profiler plugin (railcheck align) or Flight Recorder dumps (railcheck triage), "
        "which carry the real launch boundaries");
    return v;
  }
  if (each_operation != nullptr && !faulty(as_logged) && faulty(*each_operation) && !every_rank_destroyed(input)) {
    // The other way round: the reading the log seems to give is clean, each operation its own
    // launch is not, and the job did not complete. Likely the cause, not a fact.
    SchedVerdict other;
    divergent(other, input, *each_operation);
    v.kind = SchedVerdict::Kind::Inconclusive;
    v.lines.push_back(
        "INCONCLUSIVE: the job did not complete; the launch boundaries this log seems to show replay clean, but with "
        "each operation its own launch (as PyTorch issues them outside batches) it faults:");
    for (auto& l : other.lines) v.lines.push_back("  " + l);
    v.lines.push_back(
        "to settle it: record with the profiler plugin (railcheck align) or Flight Recorder dumps (railcheck triage), "
        "which carry the real launch boundaries");
    return v;
  }
  // Both readings fault (or the boundaries are known): report the reading PyTorch's calls most
  // likely had, each operation its own launch, where the boundaries are uncertain.
  const ReplayResult& r =
      each_operation != nullptr && faulty(as_logged) && faulty(*each_operation) ? *each_operation : as_logged;
  const auto& first = r.agreement.first;
  const auto p2p = p2p_framing_differs(input);
  const bool p2p_first = p2p && (!first || p2p->colls_before <= first->coll_seq);
  std::uint32_t before = first ? first->coll_seq : UINT32_MAX;
  if (p2p_first) before = p2p->colls_before == 0 ? 0 : p2p->colls_before - 1;
  if (refused_first(v, input, r, before)) return v;
  if (p2p_first) {
    p2p_divergent(v, input, *p2p);
    return v;
  }
  if (first) {
    divergent(v, input, r);
    return v;
  }
  if (!r.execution.completed) {
    v.kind = SchedVerdict::Kind::Divergent;
    v.lines.push_back(
        "DIVERGENT: every rank's plans agree on their collectives, but they cannot all complete (the HANG above)");
    return v;
  }
  const auto stopped = stopped_ranks(input);
  if (!stopped.empty()) {
    v.kind = SchedVerdict::Kind::Inconclusive;
    v.lines.push_back(fmt::format("INCONCLUSIVE: every rank's plans agree and complete, yet the job stopped: {}",
                                  stop_text(input.rank_ends[stopped.front()], stopped.front())));
    if (stopped.size() > 1) v.lines.push_back(fmt::format("(ranks {} all end so)", fmt::join(stopped, ", ")));
    std::vector<std::uint32_t> blind;
    for (std::uint32_t r = 0; r < input.rank_env.size(); ++r)
      if (!input.rank_env[r].log_has_env_lines) blind.push_back(r);
    v.lines.push_back(fmt::format(
        "the cause lies outside what was logged: a process that died, a fault below NCCL, a rank stuck outside NCCL, "
        "or a setting the model does not read{}; to settle it: Flight Recorder dumps (railcheck triage){}",
        blind.empty() ? "" : fmt::format(" (ranks {} logged no ENV lines)", fmt::join(blind, ", ")),
        blind.empty() ? "" : ", and NCCL_DEBUG_SUBSYS=INIT,ENV,COLL,TUNING on every rank"));
    return v;
  }
  v.lines.push_back("HEALTHY: every rank's plans agree and complete");
  return v;
}

}  // namespace railcheck::plan
