#include "verify/imm/imm_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/imm/imm_counter.hpp"

namespace railcheck::imm {
namespace {

constexpr std::uint32_t kImm = 0x1A;

}  // namespace

ScheduleOutcome run_schedule(const Schedule& s) {
  const auto n = static_cast<std::uint32_t>(s.fates.size());
  ImmCounter counter;
  DuplicateFilter filter(s.policy, n);
  std::vector<bool> landed(n, false);
  std::vector<std::uint32_t> counted(n, 0);
  std::uint32_t landed_count = 0;
  ScheduleOutcome out;
  auto note = [&](ImmEvent e) {
    if (e != ImmEvent::Completed) return;
    ++out.completions;
    if (landed_count < n) out.fired_with_writes_missing = true;
  };
  for (std::size_t i = 0; i <= s.landings.size(); ++i) {
    if (i == s.expect_at) note(counter.expect(kImm, n).value());
    if (i == s.landings.size()) break;
    const std::uint32_t seq = s.landings[i].seq;
    if (!landed[seq]) {
      landed[seq] = true;
      ++landed_count;
    }
    if (!filter.admit(seq)) continue;
    out.max_counted_copies = std::max(out.max_counted_copies, ++counted[seq]);
    note(counter.on_arrival(kImm));
  }
  return out;
}

Arrivals arrivals_of(ReplayPolicy policy, const std::vector<WriteFate>& fates) {
  Arrivals a;
  for (std::uint32_t i = 0; i < fates.size(); ++i) {
    if (fates[i] == WriteFate::Acked || fates[i] == WriteFate::AckLost) a.before.push_back({i, false});
    if (fates[i] == WriteFate::LateOnDeadPath) a.after.push_back({i, false});
  }
  a.failed = std::any_of(fates.begin(), fates.end(), [](WriteFate f) { return f != WriteFate::Acked; });
  if (a.failed)
    for (std::uint32_t i : writes_to_replay(policy, fates)) a.after.push_back({i, true});
  return a;
}

std::string describe(const Schedule& s) {
  std::string out = fmt::format("{}: fates [", to_string(s.policy));
  for (std::size_t i = 0; i < s.fates.size(); ++i) out += fmt::format("{}{}", i ? " " : "", to_string(s.fates[i]));
  out += "] |";
  for (std::size_t i = 0; i <= s.landings.size(); ++i) {
    if (i == s.expect_at) out += " expect";
    if (i == s.decided_at && s.decided_at < s.landings.size()) out += " | decide |";
    if (i == s.landings.size()) break;
    out += fmt::format(" w{}{}", s.landings[i].seq, s.landings[i].replay ? "'" : "");
  }
  return out;
}

}  // namespace railcheck::imm
