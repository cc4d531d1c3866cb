#pragma once
// One direction's p2p tasks of a launch, queued per peer (NCCL's tasks->peers[p].sendQueue or
// recvQueue). Stored flat — bucketed by peer in arrival order, one head per peer — because a
// launch of an all-to-all on 1024 ranks would otherwise allocate 2048 queues per rank.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/plan/task.hpp"

namespace railcheck::plan {

class PeerQueues {
 public:
  // Every task must have peer < nranks (the caller checks).
  PeerQueues(std::uint32_t nranks, std::span<const P2pTask> tasks, P2pDir dir) : head_(nranks + 1, 0) {
    for (const auto& t : tasks)
      if (t.dir == dir) ++head_[t.peer + 1];
    for (std::uint32_t p = 0; p < nranks; ++p) head_[p + 1] += head_[p];
    end_.assign(head_.begin() + 1, head_.end());
    tasks_.resize(head_[nranks]);
    std::vector<std::uint32_t> fill(head_.begin(), head_.end() - 1);
    for (const auto& t : tasks)
      if (t.dir == dir) tasks_[fill[t.peer]++] = t;
    head_.pop_back();
  }

  bool empty(std::uint32_t peer) const { return head_[peer] == end_[peer]; }
  const P2pTask& front(std::uint32_t peer) const { return tasks_[head_[peer]]; }
  void pop(std::uint32_t peer) { ++head_[peer]; }
  std::span<const P2pTask> pending(std::uint32_t peer) const {
    return std::span<const P2pTask>(tasks_).subspan(head_[peer], end_[peer] - head_[peer]);
  }
  void clear(std::uint32_t peer) { head_[peer] = end_[peer]; }

 private:
  std::vector<P2pTask> tasks_;
  std::vector<std::uint32_t> head_;  // next task of each peer
  std::vector<std::uint32_t> end_;   // one past each peer's last task
};

}  // namespace railcheck::plan
