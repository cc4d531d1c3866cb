#pragma once
// Collects per-rank operations into TaskGroups the way NCCL groups them: ncclGroupStart /
// ncclGroupEnd nest, and the tasks are launched when the outermost group ends; an operation
// outside any group is a launch of its own. Shared by the trace reader and the log importer.
#include <cstdint>
#include <map>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/task.hpp"

namespace railcheck::plan {

class StreamBuilder {
 public:
  void group_start(std::uint32_t rank);
  // Fails on an end without a start.
  Result<bool> group_end(std::uint32_t rank, bool p2p_done_before_end);
  void add(std::uint32_t rank, const CollTask& t);
  void add(std::uint32_t rank, const P2pTask& t);

  // One RankStream per rank 0..nranks-1 (a rank that did nothing has no groups). Fails when a
  // group is still open or a rank is outside [0, nranks).
  Result<std::vector<RankStream>> finish(std::uint32_t nranks);
  std::uint32_t max_rank_plus_one() const;

 private:
  struct Open {
    int depth = 0;
    TaskGroup group;
  };
  TaskGroup& target(std::uint32_t rank);
  void close_if_single(std::uint32_t rank);

  std::map<std::uint32_t, Open> open_;
  std::map<std::uint32_t, std::vector<TaskGroup>> done_;
};

}  // namespace railcheck::plan
