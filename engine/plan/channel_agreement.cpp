// Cross-rank channel comparison (channel_agreement.hpp).
#include "engine/plan/channel_agreement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/core/engine_assert.hpp"
#include "engine/plan/logged_choices.hpp"

namespace railcheck::plan {
namespace {

std::string describe_task(const CollTask& t) {
  return fmt::format("{} count {} {} {}", name(t.op), t.count, name(t.dtype), name(t.redop));
}

std::string explain_channels(const CollPlacement& a, std::uint32_t rank_a, const CollPlacement& b,
                             std::uint32_t rank_b) {
  return fmt::format(
      "collective #{} ({}): rank {} chose channels {} in its plan {} with per-channel loads {}; rank {} chose {} in "
      "plan {} with loads {}",
      a.coll_seq, describe_task(a.task), rank_a, channel_set(a.channels), a.plan, a.loads_before, rank_b,
      channel_set(b.channels), b.plan, b.loads_before);
}

// The TUNING line a rank logged itself for this collective, as text; empty when it has none.
std::string own_line(const CollPlacement& p, std::uint32_t rank) {
  const CollTask& t = p.task;
  if (t.logged_by != static_cast<int>(rank)) return {};
  return fmt::format("Algo {} proto {} channel{{Lo..Hi}}={{{}..{}}}", t.algorithm, t.protocol, t.logged_lo,
                     t.logged_hi);
}

// Two ranks' own TUNING lines for one collective, when they differ.
std::optional<Divergence> logged_lines_differ(const CollRow& row, const std::vector<RankSchedule>& ranks) {
  std::size_t first = ranks.size();
  std::string first_line;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (row.by_rank[r] == nullptr) continue;
    const std::string line = own_line(*row.by_rank[r], ranks[r].rank);
    if (line.empty()) continue;
    if (first == ranks.size()) {
      first = r;
      first_line = line;
    } else if (line != first_line) {
      return Divergence{
          Divergence::Kind::LoggedLines, row.coll_seq, ranks[first].rank, ranks[r].rank,
          fmt::format("collective #{} ({}): rank {} logged {} (line {}), rank {} logged {} (line {})", row.coll_seq,
                      describe_task(row.by_rank[r]->task), ranks[first].rank, first_line,
                      row.by_rank[first]->task.source_line, ranks[r].rank, line, row.by_rank[r]->task.source_line)};
    }
  }
  return std::nullopt;
}

std::string algo_proto_text(const CollPlacement& p) {
  return fmt::format("{}/{}", p.algo >= 0 ? algorithm_name(p.algo) : std::string_view(p.task.algorithm),
                     p.proto >= 0 ? protocol_name(p.proto) : std::string_view(p.task.protocol));
}

// The first part of two ranks' plans for one collective that differs, in the order a connection
// needs them: algorithm, protocol, channels, step size, threads. Fields the model did not decide
// (-1 / 0: the 2.18 model) are not compared.
std::optional<Divergence> plan_differs(const CollPlacement& a, std::uint32_t rank_a, const CollPlacement& b,
                                       std::uint32_t rank_b) {
  auto plan = [&](PlanField f, std::string what) {
    return Divergence{Divergence::Kind::Plan,
                      a.coll_seq,
                      rank_a,
                      rank_b,
                      fmt::format("collective #{} ({}): {}", a.coll_seq, describe_task(a.task), what),
                      f};
  };
  const bool decided = a.algo >= 0 && b.algo >= 0;
  if (decided && a.algo != b.algo)
    return plan(PlanField::Algorithm, fmt::format("rank {} runs {}, rank {} runs {}", rank_a, algo_proto_text(a),
                                                  rank_b, algo_proto_text(b)));
  if (decided && a.proto != b.proto)
    return plan(PlanField::Protocol, fmt::format("rank {} runs {}, rank {} runs {}", rank_a, algo_proto_text(a), rank_b,
                                                 algo_proto_text(b)));
  if (a.channels != b.channels) {
    Divergence d{Divergence::Kind::Channels, a.coll_seq, rank_a, rank_b, explain_channels(a, rank_a, b, rank_b)};
    d.field = PlanField::Channels;
    return d;
  }
  if (decided && a.step_bytes != b.step_bytes)
    return plan(PlanField::Chunking,
                fmt::format("{} on channels {}: rank {}'s connection steps carry {} B, rank {}'s {} B (buffSizes[{}] / "
                            "NCCL_STEPS): the two ends of each connection disagree on where a slot ends",
                            algo_proto_text(a), channel_set(a.channels), rank_a, a.step_bytes, rank_b, b.step_bytes,
                            protocol_name(a.proto)));
  if (decided && a.warps != b.warps)
    return plan(PlanField::Threads,
                fmt::format("{} on channels {}: rank {} runs {} warps per block, rank {} runs {}", algo_proto_text(a),
                            channel_set(a.channels), rank_a, a.warps, rank_b, b.warps));
  return std::nullopt;
}

}  // namespace

std::string_view describe(Divergence::Kind kind) {
  switch (kind) {
    case Divergence::Kind::LoggedLines: return "two ranks' own TUNING lines disagree";
    case Divergence::Kind::Sequence: return "the ranks issued different collectives";
    case Divergence::Kind::Channels: return "the replay put one collective on different channels on different ranks";
    case Divergence::Kind::Plan: return "the ranks' own inputs give one collective different plans";
  }
  return "";
}

std::string channel_set(const std::vector<std::uint32_t>& channels) {
  return fmt::format("{{{}}}", fmt::join(channels, ","));
}

AgreementReport compare_channels(const std::vector<RankSchedule>& ranks) {
  AgreementReport report;
  std::size_t colls = 0;
  for (const auto& r : ranks) colls = std::max(colls, r.colls.size());
  for (std::size_t k = 0; k < colls; ++k) {
    CollRow row;
    row.coll_seq = static_cast<std::uint32_t>(k);
    for (const auto& r : ranks) row.by_rank.push_back(k < r.colls.size() ? &r.colls[k] : nullptr);
    const CollPlacement* ref = row.by_rank.empty() ? nullptr : row.by_rank[0];
    if (auto d = logged_lines_differ(row, ranks)) {
      row.agreed = false;
      if (!report.first) report.first = d;
    }
    for (std::size_t r = 1; r < ranks.size(); ++r) {
      const CollPlacement* other = row.by_rank[r];
      std::optional<Divergence> d;
      if (ref == nullptr || other == nullptr || !same_operation(ref->task, other->task)) {
        d = Divergence{Divergence::Kind::Sequence, row.coll_seq, ranks[0].rank, ranks[r].rank,
                       fmt::format("collective #{}: rank {} issued {}, rank {} issued {}", k, ranks[0].rank,
                                   ref ? describe_task(ref->task) : "nothing", ranks[r].rank,
                                   other ? describe_task(other->task) : "nothing")};
      } else {
        d = plan_differs(*ref, ranks[0].rank, *other, ranks[r].rank);
      }
      if (!d) continue;
      row.agreed = false;
      if (!report.first) report.first = d;
    }
    if (!row.agreed) ++report.diverged_colls;
    report.rows.push_back(std::move(row));
  }
  RAILCHECK_ASSERT(report.rows.size() == colls && (report.diverged_colls == 0) == !report.first.has_value(),
                   "a row per collective, and a divergence is named exactly when a collective diverged");
  return report;
}

}  // namespace railcheck::plan
