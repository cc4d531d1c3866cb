#pragma once
// The soft RTO and its adaptive widening (seed §16.7). The soft RTO is the last line of
// defence: it should fire only when the HCA has not already reported an error, so its default
// is at least twice the hardware retry window. A failover that turns out to be a false alarm
// (the failed path answers a ping within `false_alarm_window`) counts; `false_alarms_to_widen`
// consecutive false alarms multiply the RTO by `rto_backoff`, up to `soft_rto_max`.
#include <cstdint>

#include "engine/core/state_hash.hpp"
#include "engine/core/time.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck {

class SoftRto {
 public:
  explicit SoftRto(const HaTunables& t)
      : current_(t.initial_soft_rto()),
        max_(t.soft_rto_max),
        backoff_(t.rto_backoff),
        limit_(t.false_alarms_to_widen),
        window_(t.false_alarm_window) {}

  Nanos current() const { return current_; }
  std::uint32_t consecutive_false_alarms() const { return false_alarms_; }

  // The path we failed over from answered `since_failover` after the failover. Returns true
  // when this widened the RTO.
  bool on_failed_path_answered(Nanos since_failover);
  void hash_state(StateHasher& h) const {
    h.add(current_);
    h.add(false_alarms_);
  }

 private:
  Nanos current_;
  Nanos max_;
  double backoff_;
  std::uint32_t limit_;
  Nanos window_;
  std::uint32_t false_alarms_ = 0;
};

}  // namespace railcheck
