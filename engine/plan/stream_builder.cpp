// Grouping of per-rank operations (stream_builder.hpp).
#include "engine/plan/stream_builder.hpp"

#include <fmt/format.h>

namespace railcheck::plan {

void StreamBuilder::group_start(std::uint32_t rank) { ++open_[rank].depth; }

Result<bool> StreamBuilder::group_end(std::uint32_t rank, bool p2p_done_before_end) {
  Open& o = open_[rank];
  if (o.depth == 0)
    return Error{fmt::format("rank {}: group end without a group start", rank), "every group_end needs a group_start"};
  if (--o.depth == 0) {
    o.group.p2p_done_before_end = p2p_done_before_end;
    if (!o.group.colls.empty() || !o.group.p2ps.empty()) done_[rank].push_back(std::move(o.group));
    o.group = TaskGroup{};
  }
  return true;
}

TaskGroup& StreamBuilder::target(std::uint32_t rank) {
  done_[rank];  // a rank that appears has a stream, even if empty
  return open_[rank].group;
}

void StreamBuilder::close_if_single(std::uint32_t rank) {
  Open& o = open_[rank];
  if (o.depth != 0) return;
  done_[rank].push_back(std::move(o.group));
  o.group = TaskGroup{};
}

void StreamBuilder::add(std::uint32_t rank, const CollTask& t) {
  target(rank).colls.push_back(t);
  close_if_single(rank);
}

void StreamBuilder::add(std::uint32_t rank, const P2pTask& t) {
  target(rank).p2ps.push_back(t);
  close_if_single(rank);
}

std::uint32_t StreamBuilder::max_rank_plus_one() const {
  std::uint32_t n = 0;
  for (const auto& [rank, groups] : done_) n = std::max(n, rank + 1);
  for (const auto& [rank, open] : open_) n = std::max(n, rank + 1);
  return n;
}

Result<std::vector<RankStream>> StreamBuilder::finish(std::uint32_t nranks) {
  for (const auto& [rank, o] : open_)
    if (o.depth != 0)
      return Error{fmt::format("rank {}: {} group(s) still open at the end of the input", rank, o.depth),
                   "a group_start without its group_end"};
  std::vector<RankStream> out(nranks);
  for (std::uint32_t r = 0; r < nranks; ++r) out[r].rank = r;
  for (auto& [rank, groups] : done_) {
    if (rank >= nranks) return Error{fmt::format("rank {} is outside the communicator of {} ranks", rank, nranks), ""};
    out[rank].groups = std::move(groups);
  }
  done_.clear();
  return out;
}

}  // namespace railcheck::plan
