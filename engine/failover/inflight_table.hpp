#pragma once
// The in-flight table: a deep copy of every WR the user handed us that has not completed, in
// original posting order. It is what makes replay possible after the QP it was posted on is
// gone (seed §3.4 "MyRequest", §16.1, §16.3).
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "engine/core/ids.hpp"
#include "engine/core/state_hash.hpp"
#include "engine/core/time.hpp"
#include "engine/core/work_request.hpp"

namespace railcheck {

// One WR of one user request. A grouped receive of n buffers is n entries, posted and replayed
// back to back in buffer order, so buffer i keeps tag i (seed §16.3).
struct InflightWr {
  RequestId request{};
  std::uint32_t part = 0;              // index of this WR inside its request
  WorkRequest wr;                      // deep copy; wr.id is the id of the current posting
  std::uint64_t seq = 0;               // sender: message sequence number; receiver: index of the message it expects
  Nanos post_time{};                   // last (re)post, for the soft RTO
  std::optional<PathIndex> posted_on;  // set while a posting is outstanding on a QP
  bool has_success_cqe = false;
  std::uint32_t byte_len = 0;
};

class InflightTable {
 public:
  // Append a WR in posting order. The reference is valid until the next append.
  InflightWr& append(InflightWr w);

  InflightWr* find_by_wr(WrId id);
  // Entries in posting order.
  std::span<InflightWr> entries() { return {entries_.data() + head_, size()}; }
  std::span<const InflightWr> entries() const { return {entries_.data() + head_, size()}; }
  std::size_t size() const { return entries_.size() - head_; }
  bool empty() const { return size() == 0; }

  // Record a new posting of `w` (fresh WrId) on `path` at `now`.
  void mark_posted(InflightWr& w, WrId id, PathIndex path, Nanos now);
  // The posting completed (successfully or not): forget the WrId.
  void mark_unposted(InflightWr& w);
  // Outstanding postings on `path`.
  std::size_t outstanding_on(PathIndex path) const;
  // The oldest outstanding posting (for the soft RTO), if any.
  const InflightWr* oldest_outstanding() const;

  // Remove completed entries from the head while they are done, calling
  // on_finished(request, parts) for each request whose every part has now completed, in posting
  // order; `parts` are its entries, valid during the call only, which must not touch the table.
  // A visitor, not a returned vector: this runs on every completion, and a vector per call plus
  // one per request's sizes were two heap allocations per small message (issue 32).
  template <typename OnFinished>
  void pop_finished(OnFinished&& on_finished) {
    while (!empty()) {
      // A request is finished when all its parts (which are contiguous) have success CQEs.
      const auto live = entries();
      const RequestId req = live.front().request;
      std::size_t n = 0;
      bool all_done = true;
      while (n < live.size() && live[n].request == req) {
        all_done = all_done && live[n].has_success_cqe && !live[n].posted_on;
        ++n;
      }
      if (!all_done) break;
      head_ += n;
      on_finished(req, std::span<const InflightWr>(live.data(), n));
    }
    compact();
  }
  // Remove everything (connection failure); returns the request ids, in order, once each.
  std::vector<RequestId> drain_all();
  // The entries, in order (the WrId index is derived from them).
  void hash_state(StateHasher& h) const;

 private:
  // Flat containers, not a deque and a hash map: the model checker copies this table into every
  // successor state, and a deque's map and blocks plus a node per hashed WrId were most of the
  // copy's allocations; two vectors copy in two. entries_[head_..] are live; pop_finished moves
  // head_ on and compacts once the dead prefix is half the vector (amortised O(1) per entry).
  std::vector<InflightWr> entries_;
  std::size_t head_ = 0;
  std::size_t base_ = 0;  // absolute index of entries_[0]
  // (WrId, absolute index) of each outstanding posting, sorted by WrId. Fresh ids come from a
  // counter, so a posting almost always lands at the end.
  std::vector<std::pair<WrId, std::size_t>> by_wr_;
  std::vector<std::pair<WrId, std::size_t>>::iterator index_of(WrId id);
  // Drop the dead prefix once it is half the vector.
  void compact();
};

}  // namespace railcheck
