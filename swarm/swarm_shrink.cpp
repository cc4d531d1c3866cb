#include "swarm/swarm_shrink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace railcheck::swarm {
namespace {

struct Candidate {
  std::string step;
  Scenario scenario;
};

std::size_t fault_entries(const FaultProfile& f) {
  return f.downs.size() + f.flaps.size() + f.jitters.size() + f.losses.size() + f.incasts.size() + f.stalls.size();
}

// Remove fault entry `i`, counting through the lists in FaultProfile's order.
void erase_fault(FaultProfile& f, std::size_t i) {
  auto take = [&i](auto& v) {
    if (i < v.size()) {
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
    i -= v.size();
    return false;
  };
  take(f.downs) || take(f.flaps) || take(f.jitters) || take(f.losses) || take(f.incasts) || take(f.stalls);
}

// Fewer ranks or rails: faults on the ones that go move onto the ones that stay (rank % n), so
// a fault that mattered keeps hitting a link of the smaller world.
void fold_onto(Scenario& sc, std::uint32_t ranks, std::uint32_t rails) {
  sc.topology.ranks = ranks;
  sc.topology.rails = rails;
  sc.topology.paths_per_conn = std::min(sc.topology.paths_per_conn, rails);
  auto fold = [&](LinkRef& l) {
    l.rank %= ranks;
    l.rail %= rails;
  };
  FaultProfile& f = sc.faults;
  for (auto& x : f.downs) fold(x.link);
  for (auto& x : f.flaps) fold(x.link);
  for (auto& x : f.jitters) fold(x.link);
  for (auto& x : f.losses) fold(x.link);
  for (auto& x : f.incasts) fold(x.link);
  for (auto& x : f.stalls) x.rank %= ranks;
  std::vector<std::uint32_t> slow;
  for (const std::uint32_t r : sc.workload.slow_ranks)
    if (std::find(slow.begin(), slow.end(), r % ranks) == slow.end()) slow.push_back(r % ranks);
  sc.workload.slow_ranks = slow;
}

// Every one-step reduction of `sc`, most shrinking first.
std::vector<Candidate> reductions(const Scenario& sc) {
  std::vector<Candidate> out;
  auto add = [&](std::string step, auto change) {
    Candidate c{std::move(step), sc};
    change(c.scenario);
    c.scenario.time_limit = liveness_bound(c.scenario);
    out.push_back(std::move(c));
  };
  const Topology& t = sc.topology;
  const Workload& w = sc.workload;
  if (t.ranks > 2) add("ranks -> 2", [&](Scenario& s) { fold_onto(s, 2, t.rails); });
  if (t.ranks > 4)
    add(fmt::format("ranks -> {}", t.ranks / 2), [&](Scenario& s) { fold_onto(s, t.ranks / 2, t.rails); });
  if (t.ranks > 2)
    add(fmt::format("ranks -> {}", t.ranks - 1), [&](Scenario& s) { fold_onto(s, t.ranks - 1, t.rails); });
  if (t.rails > t.paths_per_conn)
    add(fmt::format("rails -> {}", t.paths_per_conn), [&](Scenario& s) { fold_onto(s, t.ranks, t.paths_per_conn); });
  if (t.rails > 1)
    add(fmt::format("rails -> {}", t.rails - 1), [&](Scenario& s) { fold_onto(s, t.ranks, t.rails - 1); });
  if (t.paths_per_conn > 1)
    add(fmt::format("paths -> {}", t.paths_per_conn - 1), [](Scenario& s) { --s.topology.paths_per_conn; });
  for (std::size_t i = 0; i < fault_entries(sc.faults); ++i)
    add(fmt::format("drop fault {}", i), [i](Scenario& s) { erase_fault(s.faults, i); });
  if (!w.slow_ranks.empty())
    add("no slow receiver", [](Scenario& s) {
      s.workload.slow_ranks.clear();
      s.workload.receiver_hold = Nanos{0};
    });
  if (w.channels > 1) add("channels -> 1", [](Scenario& s) { s.workload.channels = 1; });
  if (w.pattern == TrafficPattern::Bidirectional)
    add("one direction", [](Scenario& s) { s.workload.pattern = TrafficPattern::Unidirectional; });
  const std::uint32_t min_messages = std::max(1U, w.recv_group);
  if (w.messages > min_messages) {
    add(fmt::format("messages -> {}", std::max(min_messages, w.messages / 2)),
        [&](Scenario& s) { s.workload.messages = std::max(min_messages, w.messages / 2); });
    if (w.messages > 4) {
      const std::uint32_t three_quarters = std::max(min_messages, w.messages * 3 / 4);
      add(fmt::format("messages -> {}", three_quarters),
          [three_quarters](Scenario& s) { s.workload.messages = three_quarters; });
    }
    add(fmt::format("messages -> {}", w.messages - 1), [](Scenario& s) { --s.workload.messages; });
  }
  if (w.window > 1) add("window -> 1", [](Scenario& s) { s.workload.window = 1; });
  if (w.window > 2)
    add(fmt::format("window -> {}", w.window / 2), [&](Scenario& s) { s.workload.window = w.window / 2; });
  if (w.recv_group > 1) add("recv_group -> 1", [](Scenario& s) { s.workload.recv_group = 1; });
  if (w.message_bytes > 4096)
    add(fmt::format("message_bytes -> {}", std::max<std::uint64_t>(4096, w.message_bytes / 4)),
        [&](Scenario& s) { s.workload.message_bytes = std::max<std::uint64_t>(4096, w.message_bytes / 4); });
  return out;
}

}  // namespace

Result<ShrinkOutcome> shrink_seed(std::uint64_t seed, const SwarmConfig& cfg, std::uint32_t max_runs,
                                  const ShrinkProgress& progress) {
  ShrinkOutcome best;
  best.scenario = draw_world(seed, cfg.limits).scenario;
  best.result = run_checked(best.scenario, seed, cfg.mutation);
  best.runs = 1;
  if (!best.result.finding)
    return Error{fmt::format("seed {} runs clean under `{}`: nothing to shrink", seed, replay_command(seed, cfg)),
                 "shrink a seed the swarm reported"};
  const FindingKind kind = best.result.finding->kind;
  bool progressed = true;
  while (progressed && best.runs < max_runs) {
    progressed = false;
    for (Candidate& c : reductions(best.scenario)) {
      if (best.runs >= max_runs) break;
      SeedResult r = run_checked(c.scenario, seed, cfg.mutation);
      ++best.runs;
      if (!r.finding || r.finding->kind != kind) continue;
      best.scenario = std::move(c.scenario);
      best.result = std::move(r);
      ++best.accepted;
      if (progress) progress(c.step, best.scenario);
      progressed = true;
      break;
    }
  }
  return best;
}

}  // namespace railcheck::swarm
