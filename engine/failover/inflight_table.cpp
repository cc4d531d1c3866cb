#include "engine/failover/inflight_table.hpp"

#include <algorithm>

#include "engine/core/engine_assert.hpp"

namespace railcheck {

InflightWr& InflightTable::append(InflightWr w) {
  entries_.push_back(std::move(w));
  return entries_.back();
}

std::vector<std::pair<WrId, std::size_t>>::iterator InflightTable::index_of(WrId id) {
  return std::lower_bound(by_wr_.begin(), by_wr_.end(), id,
                          [](const std::pair<WrId, std::size_t>& e, WrId key) { return e.first < key; });
}

InflightWr* InflightTable::find_by_wr(WrId id) {
  const auto it = index_of(id);
  if (it == by_wr_.end() || it->first != id) return nullptr;
  return &entries_[it->second - base_];
}

void InflightTable::mark_posted(InflightWr& w, WrId id, PathIndex path, Nanos now) {
  const std::size_t index = static_cast<std::size_t>(&w - entries_.data());
  RAILCHECK_ASSERT(&w >= entries_.data() + head_ && index < entries_.size(),
                   "mark_posted on an entry that is not in the table");
  mark_unposted(w);
  w.wr.id = id;
  w.posted_on = path;
  w.post_time = now;
  const auto at = index_of(id);
  RAILCHECK_ASSERT(at == by_wr_.end() || at->first != id, "a WrId is posted at most once at a time");
  by_wr_.insert(at, {id, base_ + index});
}

void InflightTable::mark_unposted(InflightWr& w) {
  if (!w.posted_on) return;
  if (const auto it = index_of(w.wr.id); it != by_wr_.end() && it->first == w.wr.id) by_wr_.erase(it);
  w.posted_on.reset();
}

std::size_t InflightTable::outstanding_on(PathIndex path) const {
  std::size_t n = 0;
  for (const auto& e : entries())
    if (e.posted_on == path) ++n;
  return n;
}

const InflightWr* InflightTable::oldest_outstanding() const {
  const InflightWr* best = nullptr;
  for (const auto& e : entries())
    if (e.posted_on && (best == nullptr || e.post_time < best->post_time)) best = &e;
  return best;
}

void InflightTable::compact() {
  if (head_ > 0 && head_ * 2 >= entries_.size()) {
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(head_));
    base_ += head_;
    head_ = 0;
  }
}

std::vector<RequestId> InflightTable::drain_all() {
  std::vector<RequestId> out;
  for (const auto& e : entries())
    if (out.empty() || out.back() != e.request) out.push_back(e.request);
  base_ += entries_.size();
  entries_.clear();
  head_ = 0;
  by_wr_.clear();
  return out;
}

}  // namespace railcheck
