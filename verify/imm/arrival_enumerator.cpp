#include "verify/imm/arrival_enumerator.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railcheck::imm {
namespace {

constexpr std::uint32_t kMaxWrites = 4;

// Calls `visit` with every permutation of `items`, in lexicographic order of their keys.
template <typename Visit>
void each_permutation(std::vector<Landing> items, Visit&& visit) {
  auto less = [](const Landing& a, const Landing& b) {
    return std::pair(a.seq, a.replay) < std::pair(b.seq, b.replay);
  };
  std::sort(items.begin(), items.end(), less);
  do visit(items);
  while (std::next_permutation(items.begin(), items.end(), less));
}

class Enumerator {
 public:
  explicit Enumerator(ReplayPolicy policy) { schedule_.policy = policy; }

  void orders_for(const std::vector<WriteFate>& fates) {
    schedule_.fates = fates;
    const Arrivals arrivals = arrivals_of(schedule_.policy, fates);
    const bool failed = arrivals.failed;
    each_permutation(arrivals.before, [&](const std::vector<Landing>& pre) {
      each_permutation(arrivals.after, [&](const std::vector<Landing>& post) {
        schedule_.landings = pre;
        schedule_.landings.insert(schedule_.landings.end(), post.begin(), post.end());
        schedule_.decided_at = failed ? pre.size() : schedule_.landings.size();
        for (schedule_.expect_at = 0; schedule_.expect_at <= schedule_.landings.size(); ++schedule_.expect_at) check();
      });
    });
  }

  ImmCheckReport take() { return std::move(report_); }

 private:
  void check() {
    ++report_.schedules;
    for (ImmInvariant inv : violated(run_schedule(schedule_))) {
      InvariantFinding& f = report_.findings[static_cast<std::size_t>(inv)];
      if (f.schedules++ == 0) f.first = schedule_;
    }
  }
  Schedule schedule_;
  ImmCheckReport report_;
};

}  // namespace

bool ImmCheckReport::clean() const {
  return std::all_of(findings.begin(), findings.end(), [](const InvariantFinding& f) { return f.schedules == 0; });
}

std::string ImmCheckReport::summary() const {
  std::string out = fmt::format("{} schedules\n", schedules);
  for (std::size_t i = 0; i < kImmInvariants; ++i) {
    const InvariantFinding& f = findings[i];
    out += fmt::format("  {}: {}", to_string(static_cast<ImmInvariant>(i)),
                       f.schedules == 0 ? std::string("holds") : fmt::format("{} violating schedules", f.schedules));
    if (f.first) out += fmt::format("; first: {}", describe(*f.first));
    out += "\n";
  }
  return out;
}

Result<ImmCheckReport> check_every_order(const ImmCheckSpec& spec) {
  if (spec.writes == 0 || spec.writes > kMaxWrites)
    return Error{fmt::format("imm check: {} writes", spec.writes),
                 fmt::format("use 1..{}: the orders grow as (2N)!", kMaxWrites)};
  Enumerator e(spec.policy);
  std::vector<WriteFate> fates(spec.writes, WriteFate::Acked);
  if (!spec.failover) {
    e.orders_for(fates);
    return e.take();
  }
  // Every fate assignment, as a base-4 counter over the writes.
  const std::uint32_t kinds = 4;
  std::uint64_t assignments = 1;
  for (std::uint32_t i = 0; i < spec.writes; ++i) assignments *= kinds;
  for (std::uint64_t code = 0; code < assignments; ++code) {
    std::uint64_t c = code;
    for (auto& f : fates) {
      f = static_cast<WriteFate>(c % kinds);
      c /= kinds;
    }
    e.orders_for(fates);
  }
  return e.take();
}

}  // namespace railcheck::imm
