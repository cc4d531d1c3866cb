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
  // The GPU actor itself is the only one waiting for this trainer's memory, and it is here: what
  // the kernel no longer needs is free before its next hold() without waking anybody.
  const std::uint64_t kept = run_.pipeline.release_gathered ? t.send_bytes : t.tmp_bytes;
  used_ -= t.tmp_bytes - kept;
  held_.push_back({kept, static_cast<std::uint32_t>(t.writes.size()), group});
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
