// What a lab failover run's plan and result say, as plain data (lab_failover.hpp): the fault's
// constructors, the side reports' values, and the rates and shares a result derives from its
// timestamps. Kept apart from running the lab (lab_failover.cpp), which forks, pins and faults.
#include <algorithm>
#include <iterator>
#include <limits>

#include "backends/hw/conform/lab_failover.hpp"

namespace railcheck::conform {

double payload_gbps(std::uint64_t messages, std::size_t bytes, long long from_ns, long long to_ns) {
  if (from_ns < 0 || to_ns <= from_ns) return 0;
  return static_cast<double>(messages) * static_cast<double>(bytes) * 8.0 / static_cast<double>(to_ns - from_ns);
}

double before_fault_gbps(const LabFailoverResult& r, std::size_t bytes) {
  if (r.fault_ns < 0) return 0;
  // The span the sim's figure covers: from the stream's start to when the fault was due (it took
  // effect later where the parent made it).
  if (r.due_ns > r.start_ns && r.due_ns <= r.fault_ns) return payload_gbps(r.verified_at_due, bytes, r.start_ns, r.due_ns);
  return payload_gbps(r.verified_at_fault, bytes, r.start_ns, r.fault_ns);
}

long long LabFailoverResult::fault_window_ns() const {
  if (fault_ns < 0) return 0;
  for (std::size_t i = 0; i < action_ns.size() && i < action_begun_ns.size(); ++i)
    if (action_ns[i] == fault_ns && action_begun_ns[i] >= 0 && action_begun_ns[i] <= fault_ns)
      return fault_ns - action_begun_ns[i];
  return 0;
}

double LabFailoverResult::shared_core(long long from_ns, long long to_ns) const {
  if (to_ns <= from_ns || sender.cpus.empty() || receiver.cpus.empty()) return -1;
  // The core each side was on at `t`: its last move at or before t (its first before it moved).
  auto cpu_at = [](const std::vector<std::pair<long long, long long>>& moves, long long t) {
    auto it = std::upper_bound(moves.begin(), moves.end(), std::make_pair(t, std::numeric_limits<long long>::max()));
    return it == moves.begin() ? moves.front().second : std::prev(it)->second;
  };
  // Every instant either side moved, within [from, to): between two of them neither moves.
  std::vector<long long> cuts{from_ns, to_ns};
  for (const auto* moves : {&sender.cpus, &receiver.cpus})
    for (const auto& [at, cpu] : *moves)
      if (at > from_ns && at < to_ns) cuts.push_back(at);
  std::sort(cuts.begin(), cuts.end());
  long long shared = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
    if (cpu_at(sender.cpus, cuts[i]) == cpu_at(receiver.cpus, cuts[i])) shared += cuts[i + 1] - cuts[i];
  return static_cast<double>(shared) / static_cast<double>(to_ns - from_ns);
}

long long LabSideReport::get(const std::string& key, long long missing) const {
  auto it = values.find(key);
  return it == values.end() ? missing : it->second;
}

bool LabFault::impairs() const {
  return std::any_of(actions.begin(), actions.end(), [](const LabAction& a) {
    return a.kind == LabAction::Kind::Loss || a.kind == LabAction::Kind::Delay || a.kind == LabAction::Kind::Clear;
  });
}

LabFault LabFault::link_down(std::chrono::nanoseconds at, int rail) {
  LabFault f;
  LabAction a;
  a.kind = LabAction::Kind::LinkDown;
  a.at = at;
  a.rail = rail;
  f.actions.push_back(a);
  return f;
}

LabFault LabFault::stop_receiver(std::chrono::nanoseconds at, std::chrono::nanoseconds stop_for) {
  LabFault f;
  LabAction a;
  a.kind = LabAction::Kind::StopReceiver;
  a.at = at;
  f.actions.push_back(a);
  a.kind = LabAction::Kind::ContReceiver;
  a.at = at + stop_for;
  f.actions.push_back(a);
  return f;
}

}  // namespace railcheck::conform
