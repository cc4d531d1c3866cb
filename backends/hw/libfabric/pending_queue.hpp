#pragma once
// Posts a provider refused with -FI_EAGAIN (its transmit or receive queue is full) wait here
// and are retried, oldest first, each time the connection makes progress. A new post goes to
// the back of the queue while anything waits, so the order the engine posted in is the order
// the provider sees: data receives and sends must stay in order (FI_ORDER_SAS).
#include <rdma/fi_errno.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "backends/hw/libfabric/inline_callable.hpp"

namespace railcheck::fabric {

class PendingQueue {
 public:
  struct Post {
    InlineCallable<ssize_t(), 64> attempt;       // the fi_* call; returns 0, -FI_EAGAIN or an error
    InlineCallable<void(ssize_t), 32> on_error;  // a final error other than -FI_EAGAIN
  };

  // Returns true when the post went to the provider at once. The callables become a Post only
  // when they must wait; a Post is held inline in a ring that keeps its capacity, so a post that
  // waits costs no allocation either (issue 32).
  template <typename Attempt, typename OnError>
  bool submit(Attempt&& attempt, OnError&& on_error) {
    if (empty()) {
      const ssize_t rc = attempt();
      if (rc == 0) return true;
      if (rc != -FI_EAGAIN) {
        on_error(rc);
        return false;
      }
      ++deferred_;
    }
    push_back(Post{std::forward<Attempt>(attempt), std::forward<OnError>(on_error)});
    return false;
  }

  // Retries from the front until the provider says -FI_EAGAIN again, or `max_posts` went out.
  // Returns how many are left.
  std::size_t retry(std::size_t max_posts = SIZE_MAX) {
    for (std::size_t out = 0; count_ > 0 && out < max_posts; ++out) {
      const ssize_t rc = ring_[head_].attempt();
      if (rc == -FI_EAGAIN) break;
      if (rc == 0) {
        pop_front();
        continue;
      }
      Post p = ring_[head_];  // on_error may submit: the ring may grow under the front slot
      pop_front();
      p.on_error(rc);
    }
    return count_;
  }

  void clear() {
    head_ = 0;
    count_ = 0;
  }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Posts that ever had to wait (RailStats::eagain).
  std::size_t deferred() const { return deferred_; }

 private:
  // A ring of whole Posts (issue 32: with a window larger than the provider's queue most 64 B
  // writes wait here, and a vector drained from the front paid a compaction that moved every
  // waiting Post each time half of them had gone out). Its size is a power of two; it doubles
  // when full, and its capacity is kept.
  void push_back(Post&& p) {
    if (count_ == ring_.size()) grow();
    ring_[(head_ + count_) & (ring_.size() - 1)] = std::move(p);
    ++count_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
  }
  void grow() {
    const std::size_t n = ring_.empty() ? 16 : ring_.size() * 2;
    std::vector<Post> bigger;
    bigger.reserve(n);
    for (std::size_t i = 0; i < count_; ++i) bigger.push_back(ring_[(head_ + i) & (ring_.size() - 1)]);
    bigger.resize(n, kIdle);  // slots past count_ are overwritten before they are read
    ring_ = std::move(bigger);
    head_ = 0;
  }

  static inline const Post kIdle{[] { return ssize_t{0}; }, [](ssize_t) {}};

  std::vector<Post> ring_;  // ring_[head_ .. head_ + count_) wait, oldest first (indices mod size)
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::size_t deferred_ = 0;
};

}  // namespace railcheck::fabric
