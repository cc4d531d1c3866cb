#include "engine/failover/rail_liveness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/core/engine_assert.hpp"

namespace railcheck {

std::string_view to_string(RailVerdict v) {
  switch (v) {
    case RailVerdict::Alive: return "alive";
    case RailVerdict::Congested: return "congested";
    case RailVerdict::Dead: return "dead";
  }
  return "?";
}

RailLiveness::RailLiveness(const HaTunables& t)
    : enabled_(t.liveness),
      floor_(t.liveness_floor),
      max_(t.liveness_max),
      rttvar_mult_(t.liveness_rttvar_mult),
      congested_ratio_(t.liveness_congested_ratio),
      limit_(t.liveness_misses) {
  RAILCHECK_ASSERT(floor_ > Nanos{0} && floor_ <= max_, "validate() keeps the floor positive and below the max");
  RAILCHECK_ASSERT(limit_ >= 1, "a rail is declared dead after one missed probe at the least");
}

Nanos RailLiveness::pto() const {
  Nanos p = floor_;
  // RFC 6298 / RFC 9002: the smoothed RTT plus a multiple of its variation. The floor keeps a
  // microsecond fabric from turning scheduling noise into misses; the max keeps a rail whose
  // answers crawl from being waited on forever.
  if (adapt_ && srtt_)
    p = *srtt_ + Nanos{static_cast<std::int64_t>(std::llround(static_cast<double>(rttvar_.count()) * rttvar_mult_))};
  return std::clamp(p, floor_, max_);
}

Nanos RailLiveness::quiet_since() const {
  Nanos q = last_alive_;
  if (!outstanding_.empty()) q = std::max(q, outstanding_.back().sent);
  return q;
}

Nanos RailLiveness::next_check() const {
  const Nanos timeout = pto();
  Nanos next = quiet_since() + timeout;
  for (const auto& p : outstanding_)
    if (!p.counted) next = std::min(next, p.sent + timeout);
  return next;
}

void RailLiveness::watch(Nanos now) {
  if (!enabled_) return;
  srtt_.reset();
  rttvar_ = Nanos{0};
  min_rtt_.reset();
  resume(now);
}

void RailLiveness::resume(Nanos now) {
  if (!enabled_) return;  // a disabled detector keeps no state: the checker's fingerprints stay as they were
  // Nothing was expected of the rail while it carried no work: silence then is no miss.
  last_alive_ = std::max(last_alive_, now);
  for (auto& p : outstanding_) p.counted = true;
  misses_ = 0;
  verdict_ = RailVerdict::Alive;
}

void RailLiveness::handle_data_completion(Nanos now) {
  if (!enabled_) return;
  last_alive_ = std::max(last_alive_, now);
  // Probes still out may yet bring an RTT sample, but they can no longer be misses.
  for (auto& p : outstanding_) p.counted = true;
  misses_ = 0;
  if (verdict_ == RailVerdict::Dead) verdict_ = RailVerdict::Alive;
}

RailVerdict RailLiveness::handle_answer(Nanos now, std::uint64_t nonce) {
  const auto it =
      std::find_if(outstanding_.begin(), outstanding_.end(), [nonce](const Probe& p) { return p.nonce == nonce; });
  if (it == outstanding_.end()) return verdict_;  // from before watch(): another rail's history
  const Nanos rtt = now - it->sent;
  RAILCHECK_ASSERT(rtt >= Nanos{0}, "a probe is answered after it was sent");
  // A late answer is still an answer: the rail is slow, not dead (congestion grows RTTs).
  outstanding_.erase(outstanding_.begin(), it + 1);
  sample(rtt);
  last_alive_ = std::max(last_alive_, now);
  misses_ = 0;
  const bool slow =
      min_rtt_ && static_cast<double>(rtt.count()) > congested_ratio_ * static_cast<double>(min_rtt_->count());
  verdict_ = slow ? RailVerdict::Congested : RailVerdict::Alive;
  return verdict_;
}

void RailLiveness::sample(Nanos rtt) {
  if (!min_rtt_ || rtt < *min_rtt_) min_rtt_ = rtt;
  if (!srtt_) {
    srtt_ = rtt;
    rttvar_ = rtt / 2;
    return;
  }
  const Nanos err = *srtt_ > rtt ? *srtt_ - rtt : rtt - *srtt_;
  rttvar_ = (3 * rttvar_ + err) / 4;
  srtt_ = (7 * *srtt_ + rtt) / 8;
}

RailLiveness::Check RailLiveness::on_check(Nanos now) {
  Check c;
  if (!enabled_) return c;
  const Nanos timeout = pto();
  for (auto& p : outstanding_) {
    if (!p.counted && now - p.sent >= timeout) {
      p.counted = true;
      ++misses_;
    }
  }
  if (misses_ >= limit_) {
    verdict_ = RailVerdict::Dead;
    c.dead = true;
    c.why = fmt::format("{} probe(s) in a row unanswered, no sign of life for {} (probe timeout {})", misses_,
                        format_duration(now - last_alive_), format_duration(timeout));
    return c;
  }
  if (now - quiet_since() >= timeout) {
    // Keep the last few: enough to match a late answer, bounded for the model checker.
    if (outstanding_.size() > limit_) outstanding_.erase(outstanding_.begin());
    outstanding_.push_back(Probe{++nonce_counter_, now, false});
    c.probe = nonce_counter_;
  }
  RAILCHECK_ASSERT(outstanding_.size() <= limit_ + 1, "at most misses + 1 probes are kept for late answers");
  return c;
}

void RailLiveness::hash_state(StateHasher& h, IdCounters counters) const {
  h.add(enabled_);
  if (!enabled_) return;
  h.add(adapt_);
  h.add(srtt_);
  h.add(rttvar_);
  h.add(min_rtt_);
  h.add(last_alive_);
  h.add(outstanding_.size());
  for (const auto& p : outstanding_) {
    if (counters == IdCounters::Hash) h.add(p.nonce);  // fresh ids, compared only with each other
    h.add(p.sent);
    h.add(p.counted);
  }
  h.add(misses_);
  if (counters == IdCounters::Hash) h.add(nonce_counter_);
  h.add(verdict_);
}

}  // namespace railcheck
