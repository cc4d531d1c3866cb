// Cross-rank channel comparison (channel_agreement.hpp).
#include "engine/plan/channel_agreement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace railcheck::plan {
namespace {

bool same_operation(const CollTask& a, const CollTask& b) {
  return a.op == b.op && a.count == b.count && a.dtype == b.dtype && a.redop == b.redop;
}

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

}  // namespace

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
