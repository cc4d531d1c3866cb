#pragma once
// Posts a provider refused with -FI_EAGAIN (its transmit or receive queue is full) wait here
// and are retried, oldest first, each time the connection makes progress. A new post goes to
// the back of the queue while anything waits, so the order the engine posted in is the order
// the provider sees: data receives and sends must stay in order (FI_ORDER_SAS).
#include <rdma/fi_errno.h>
#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <utility>

namespace railcheck::fabric {

class PendingQueue {
 public:
  struct Post {
    std::function<ssize_t()> attempt;       // the fi_* call; returns 0, -FI_EAGAIN or an error
    std::function<void(ssize_t)> on_error;  // a final error other than -FI_EAGAIN
  };

  // Returns true when the post went to the provider at once. The callables become a Post (two
  // std::functions, an allocation each for a lambda of more than two pointers) only when they must
  // wait: the common case, an empty queue and a provider that takes the post, costs none.
  template <typename Attempt, typename OnError>
  bool submit(Attempt&& attempt, OnError&& on_error) {
    if (queue_.empty()) {
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
    while (!queue_.empty()) {
      const ssize_t rc = queue_.front().attempt();
      if (rc == -FI_EAGAIN) break;
      Post p = std::move(queue_.front());
      queue_.pop_front();
      if (rc < 0) p.on_error(rc);
    }
    return queue_.size();
  }

  void clear() { queue_.clear(); }
  std::size_t size() const { return queue_.size(); }
  bool empty() const { return queue_.empty(); }
  // Posts that ever had to wait (RailStats::eagain).
  std::size_t deferred() const { return deferred_; }

 private:
  std::deque<Post> queue_;
  std::size_t deferred_ = 0;
};

}  // namespace railcheck::fabric
