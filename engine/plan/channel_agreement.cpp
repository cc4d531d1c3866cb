// Cross-rank channel comparison (channel_agreement.hpp).
#include "engine/plan/channel_agreement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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

}  // namespace

std::string_view describe(Divergence::Kind kind) {
  switch (kind) {
    case Divergence::Kind::LoggedLines: return "two ranks' own TUNING lines disagree";
    case Divergence::Kind::Sequence: return "the ranks issued different collectives";
    case Divergence::Kind::Channels: return "the replay put one collective on different channels on different ranks";
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
      } else if (ref->channels != other->channels) {
        d = Divergence{Divergence::Kind::Channels, row.coll_seq, ranks[0].rank, ranks[r].rank,
                       explain_channels(*ref, ranks[0].rank, *other, ranks[r].rank)};
      }
      if (!d) continue;
      row.agreed = false;
      if (!report.first) report.first = d;
    }
    if (!row.agreed) ++report.diverged_colls;
    report.rows.push_back(std::move(row));
  }
  return report;
}

}  // namespace railcheck::plan
