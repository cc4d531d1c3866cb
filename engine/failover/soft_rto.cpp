#include "engine/failover/soft_rto.hpp"

#include <algorithm>
#include <cmath>

namespace railcheck {

bool SoftRto::on_failed_path_answered(Nanos since_failover) {
  if (since_failover > window_) {
    // The path really was down for a while: a genuine failure resets the streak (seed §16.7).
    false_alarms_ = 0;
    return false;
  }
  if (++false_alarms_ < limit_) return false;
  false_alarms_ = 0;
  const auto widened = Nanos{static_cast<std::int64_t>(std::llround(static_cast<double>(current_.count()) * backoff_))};
  const Nanos next = std::min(widened, max_);
  const bool changed = next != current_;
  current_ = next;
  return changed;
}

}  // namespace railcheck
