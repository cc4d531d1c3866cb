#include "backends/sim/routing/trainer_writes.hpp"

#include <algorithm>

namespace railcheck::sim {

void TrainerWrites::take(std::uint64_t bytes) {
  used_ += bytes;
  ++held_tasks_;
  run_.peak_tmp[rank_] = std::max(run_.peak_tmp[rank_], used_);
}

void TrainerWrites::give(std::uint64_t bytes) {
  used_ -= bytes;
  --held_tasks_;
}

void TrainerWrites::post(std::size_t group, const PipelineTask& t) {
  if (t.writes.empty()) {
    give(t.tmp_bytes);
    return;
  }
  held_.push_back({t.tmp_bytes, static_cast<std::uint32_t>(t.writes.size()), group});
  for (const routing::WeightWrite& w : t.writes) send(held_.size() - 1, w);
}

bool TrainerWrites::landed(std::size_t task, double finish) {
  Held& h = held_[task];
  ++run_.landed_writes;
  double& end = run_.group_end[h.group];
  end = std::max(end, finish - run_.start);
  if (--h.writes_left > 0) return false;
  give(h.bytes);
  return true;
}

}  // namespace railcheck::sim
