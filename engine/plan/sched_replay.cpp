// Multi-rank replay and its report (sched_replay.hpp).
#include "engine/plan/sched_replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/plan/nccl228_scheduler.hpp"
#include "engine/plan/rank_scheduler.hpp"

namespace railcheck::plan {

Result<ReplayResult> replay(const SchedInput& input, const SchedulePolicy& policy, NcclVersion nccl) {
  auto shape = validated(input.shape);
  if (!shape) return shape.error();
  ReplayResult out;
  out.policy = policy;
  out.nccl = nccl;
  if (nccl == NcclVersion::V2_18) {
    auto schedules = schedule_all(shape.value(), policy, input.ranks);
    if (!schedules) return schedules.error();
    out.schedules = std::move(schedules).value();
  } else {
    std::vector<CommShape> rank_shapes;
    for (const auto& own : input.rank_shapes) {
      auto ok = validated(own);
      if (!ok) return ok.error();
      rank_shapes.push_back(std::move(ok).value());
    }
    auto schedules = schedule_all_2_28(shape.value(), policy, input.ranks, false, rank_shapes);
    if (!schedules) return schedules.error();
    out.schedules = std::move(schedules->schedules);
  }
  out.agreement = compare_channels(out.schedules);
  out.execution = execute_plans(out.schedules);
  return out;
}

namespace {

std::string channel_table(const ReplayResult& r, std::uint32_t max_ranks, std::uint32_t max_rows) {
  const auto nranks = static_cast<std::uint32_t>(r.schedules.size());
  const auto shown = std::min(nranks, max_ranks);
  std::string out = fmt::format("{:>2} {:>5} {:<14}", "", "coll", "op");
  for (std::uint32_t k = 0; k < shown; ++k) out += fmt::format(" {:>9}", fmt::format("r{}", k));
  if (shown < nranks) out += fmt::format("  (+{} ranks)", nranks - shown);
  out += "\n";
  std::uint32_t rows = 0;
  for (const auto& row : r.agreement.rows) {
    if (rows++ == max_rows) {
      out += fmt::format("   ... {} more collectives\n", r.agreement.rows.size() - max_rows);
      break;
    }
    const CollPlacement* ref = row.by_rank.empty() ? nullptr : row.by_rank[0];
    out += fmt::format("{:>2} {:>5} {:<14}", row.agreed ? "" : "!", row.coll_seq, ref ? name(ref->task.op) : "-");
    for (std::uint32_t k = 0; k < shown; ++k) {
      const CollPlacement* p = row.by_rank[k];
      out += fmt::format(" {:>9}", p ? channel_set(p->channels) : "-");
    }
    out += "\n";
  }
  return out;
}

}  // namespace

LoggedAgreement logged_agreement(const ReplayResult& r) {
  LoggedAgreement a;
  for (const auto& s : r.schedules) {
    for (const auto& c : s.colls) {
      if (c.task.logged_lo < 0) continue;
      ++a.logged;
      std::vector<std::uint32_t> want;
      for (int ch = c.task.logged_lo; ch <= c.task.logged_hi; ++ch) want.push_back(static_cast<std::uint32_t>(ch));
      auto got = c.channels;
      std::sort(got.begin(), got.end());
      if (got == want) {
        ++a.same;
      } else if (a.first_difference.empty()) {
        a.first_difference = fmt::format(
            "rank {} collective #{} ({} count {}, line {}): NCCL logged {}, replayed on {}", s.rank, c.coll_seq,
            name(c.task.op), c.task.count, c.task.source_line, channel_set(want), channel_set(got));
      }
    }
  }
  return a;
}

std::string render_report(const ReplayResult& r, std::uint32_t max_ranks, std::uint32_t max_rows) {
  std::uint64_t plans = 0;
  for (const auto& s : r.schedules) plans += s.plans.size();
  std::string out = fmt::format("policy {} under NCCL {} rules: {} ({} ranks, {} kernel plans)\n", r.policy.name,
                                name(r.nccl), r.policy.summary, r.schedules.size(), plans);
  out += channel_table(r, max_ranks, max_rows);
  if (r.agreement.first) {
    out += fmt::format("DIVERGENCE in {} of {} collectives; first ({}): {}\n", r.agreement.diverged_colls,
                       r.agreement.rows.size(), describe(r.agreement.first->kind), r.agreement.first->explanation);
  } else {
    out += fmt::format(
        "plans agree on every rank for all {} collectives (algorithm, protocol, channels, step size, threads)\n",
        r.agreement.rows.size());
  }
  if (const auto logged = logged_agreement(r); logged.logged != 0) {
    // A difference here is the model's against NCCL's own line, not one between the job's ranks.
    out += fmt::format("logged channels (TUNING lines): {} of {} collectives replayed on the channels NCCL used{}\n",
                       logged.same, logged.logged,
                       logged.first_difference.empty()
                           ? ""
                           : "; first difference (the model disagrees with a logged line; not a fault of the job): " +
                                 logged.first_difference);
  }
  if (r.execution.completed) {
    out += fmt::format("execution: every plan completes ({} work items)\n", r.execution.items_done);
  } else {
    out += fmt::format("HANG: {} of {} ranks never finish; {}", r.execution.stuck_ranks.size(), r.schedules.size(),
                       r.execution.hang ? r.execution.hang->describe() : std::string("\n"));
  }
  return out;
}

}  // namespace railcheck::plan
