#include "engine/failover/inflight_table.hpp"

#include <cassert>

namespace railcheck {

InflightWr& InflightTable::append(InflightWr w) {
  entries_.push_back(std::move(w));
  return entries_.back();
}

InflightWr* InflightTable::find_by_wr(WrId id) {
  auto it = by_wr_.find(id);
  if (it == by_wr_.end()) return nullptr;
  return &entries_[it->second - base_];
}

void InflightTable::mark_posted(InflightWr& w, WrId id, PathIndex path, Nanos now) {
  if (w.posted_on) by_wr_.erase(w.wr.id);
  // deque elements are not contiguous: find the position by scanning from the back, where new
  // postings almost always are.
  std::size_t index = entries_.size();
  for (std::size_t i = entries_.size(); i-- > 0;) {
    if (&entries_[i] == &w) {
      index = i;
      break;
    }
  }
  assert(index < entries_.size() && "mark_posted on an entry that is not in the table");
  w.wr.id = id;
  w.posted_on = path;
  w.post_time = now;
  by_wr_[id] = base_ + index;
}

void InflightTable::mark_unposted(InflightWr& w) {
  if (!w.posted_on) return;
  by_wr_.erase(w.wr.id);
  w.posted_on.reset();
}

std::size_t InflightTable::outstanding_on(PathIndex path) const {
  std::size_t n = 0;
  for (const auto& e : entries_)
    if (e.posted_on == path) ++n;
  return n;
}

const InflightWr* InflightTable::oldest_outstanding() const {
  const InflightWr* best = nullptr;
  for (const auto& e : entries_)
    if (e.posted_on && (best == nullptr || e.post_time < best->post_time)) best = &e;
  return best;
}

std::vector<InflightTable::FinishedRequest> InflightTable::pop_finished() {
  std::vector<FinishedRequest> out;
  while (!entries_.empty()) {
    // A request is finished when all its parts (which are contiguous) have success CQEs.
    const RequestId req = entries_.front().request;
    std::size_t n = 0;
    bool all_done = true;
    while (n < entries_.size() && entries_[n].request == req) {
      all_done = all_done && entries_[n].has_success_cqe && !entries_[n].posted_on;
      ++n;
    }
    if (!all_done) break;
    FinishedRequest f{req, {}};
    for (std::size_t i = 0; i < n; ++i) {
      f.sizes.push_back(entries_.front().byte_len);
      entries_.pop_front();
      ++base_;
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<RequestId> InflightTable::drain_all() {
  std::vector<RequestId> out;
  for (const auto& e : entries_)
    if (out.empty() || out.back() != e.request) out.push_back(e.request);
  base_ += entries_.size();
  entries_.clear();
  by_wr_.clear();
  return out;
}

}  // namespace railcheck
