#pragma once
// Posts a provider refused with -FI_EAGAIN (its transmit or receive queue is full) wait here
// and are retried, oldest first, each time the connection makes progress. A new post goes to
// the back of the queue while anything waits, so the order the engine posted in is the order
// the provider sees: data receives and sends must stay in order (FI_ORDER_SAS).
#include <rdma/fi_errno.h>
#include <sys/types.h>

#include <cstddef>
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
  // when they must wait; a Post is held inline in a vector that keeps its capacity, so a post
  // that waits costs no allocation either (issue 32).
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
    queue_.push_back(Post{std::forward<Attempt>(attempt), std::forward<OnError>(on_error)});
    return false;
  }

  // Retries from the front until the provider says -FI_EAGAIN again. Returns how many left.
  std::size_t retry() {
    while (!empty()) {
      Post& front = queue_[head_];
      const ssize_t rc = front.attempt();
      if (rc == -FI_EAGAIN) break;
      Post p = front;  // on_error may submit: the queue may grow under `front`
      ++head_;
      if (rc < 0) p.on_error(rc);
    }
    compact();
    return size();
  }

  void clear() {
    queue_.clear();
    head_ = 0;
  }
  std::size_t size() const { return queue_.size() - head_; }
  bool empty() const { return size() == 0; }
  // Posts that ever had to wait (RailStats::eagain).
  std::size_t deferred() const { return deferred_; }

 private:
  // Drops the posts already handed over once they are half the vector (amortised O(1) each).
  void compact() {
    if (head_ == queue_.size()) {
      clear();
    } else if (head_ * 2 >= queue_.size()) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  std::vector<Post> queue_;  // queue_[head_..] wait, oldest first
  std::size_t head_ = 0;
  std::size_t deferred_ = 0;
};

}  // namespace railcheck::fabric
