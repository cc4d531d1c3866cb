#include "verify/liveness_world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

#include "engine/core/state_hash.hpp"

namespace railcheck::verify {

HaTunables LivenessModel::tunables() const {
  HaTunables t;
  t.liveness = true;
  t.liveness_floor = floor;
  t.liveness_max = max;
  t.liveness_misses = misses;
  return t;
}

LivenessWorld::LivenessWorld(const LivenessModel& m) : model_(m), det_(m.tunables()), last_rtt_(m.rtt_min) {
  assert(m.rtt_min > Nanos{0} && m.rtt_min <= m.rtt_max);
  if (m.mutation == Mutation::DropRttAdaptation) det_.drop_rtt_adaptation();
  det_.watch(Nanos{0});
}

std::optional<Nanos> LivenessWorld::next_event() const {
  if (dead_at_ || now_ >= model_.horizon) return std::nullopt;
  Nanos next = det_.next_check();
  for (const auto& f : flights_) next = std::min(next, f.answer_at);
  return std::min(next, model_.horizon);
}

std::vector<LivenessWorld::ChoiceType> LivenessWorld::choices() const {
  using K = ChoiceType::Kind;
  std::vector<ChoiceType> out;
  if (pending_) {
    // The probe just sent: dropped by a dead rail, or answered within the bound (or lost).
    if (died_at_) return {ChoiceType{K::Lose, {}}};
    const Nanos lo = std::max(model_.rtt_min, last_rtt_ - model_.rtt_step);
    const Nanos hi = std::min(model_.rtt_max, last_rtt_ + model_.rtt_step);
    for (Nanos r = lo; r <= hi; r += model_.rtt_step) out.push_back({K::Answer, r});
    if (losses_ < model_.losses) out.push_back({K::Lose, {}});
    return out;
  }
  if (!next_event()) return out;  // the verdict is in, or the horizon reached: an end state
  if (!died_at_ && deaths_ < model_.deaths) out.push_back({K::Kill, {}});
  out.push_back({K::Advance, {}});
  return out;
}

void LivenessWorld::apply(const ChoiceType& c) {
  using K = ChoiceType::Kind;
  switch (c.kind) {
    case K::Answer:
      assert(pending_);
      flights_.push_back(Flight{*pending_, now_ + c.rtt});
      last_rtt_ = c.rtt;
      pending_.reset();
      return;
    case K::Lose:
      assert(pending_);
      if (!died_at_) ++losses_;
      pending_.reset();
      return;
    case K::Kill:
      // Everything in flight dies with the rail.
      died_at_ = now_;
      pto_at_death_ = det_.pto();
      ++deaths_;
      flights_.clear();
      return;
    case K::Advance: break;
  }
  const auto next = next_event();
  assert(next && *next >= now_);
  now_ = *next;
  if (now_ >= model_.horizon) return;
  // Answers due now first: a probe answered at the instant its timeout expires was in time.
  const auto due =
      std::stable_partition(flights_.begin(), flights_.end(), [this](const Flight& f) { return f.answer_at > now_; });
  std::vector<Flight> arrived(due, flights_.end());
  flights_.erase(due, flights_.end());
  for (const auto& f : arrived) det_.handle_answer(now_, f.nonce);
  if (det_.next_check() > now_) return;
  const RailLiveness::Check check = det_.on_check(now_);
  if (check.dead) dead_at_ = now_;
  if (check.probe) pending_ = *check.probe;
}

std::uint64_t LivenessWorld::fingerprint() const {
  StateHasher h;
  det_.hash_state(h, IdCounters::Hash);
  h.add(now_);
  h.add(pending_);
  h.add(flights_.size());
  for (const auto& f : flights_) {
    h.add(f.nonce);
    h.add(f.answer_at);
  }
  h.add(last_rtt_);
  h.add(died_at_);
  h.add(dead_at_);
  h.add(deaths_);
  h.add(losses_);
  return h.value();
}

namespace {

using Verdict = std::optional<std::string>;

Verdict no_false_verdict(const LivenessWorld& w, bool) {
  if (!w.dead_at() || w.died_at() || w.losses() > 0) return std::nullopt;
  const LivenessModel& m = w.model();
  return fmt::format(
      "the rail was declared dead at {} although it lives and every probe was answered within {} (round trips "
      "moving by at most {} per probe); last round trip {}, probe timeout {}",
      format_duration(*w.dead_at()), format_duration(m.rtt_max), format_duration(m.rtt_step),
      format_duration(w.last_rtt()), format_duration(w.detector().pto()));
}

Verdict dead_rail_found(const LivenessWorld& w, bool) {
  if (!w.died_at() || w.dead_at()) return std::nullopt;
  const Nanos bound = *w.died_at() + (w.model().misses + 1) * *w.pto_at_death();
  if (w.now() <= bound) return std::nullopt;
  return fmt::format("the rail died at {} and is not declared dead at {} (bound {})", format_duration(*w.died_at()),
                     format_duration(w.now()), format_duration(bound));
}

}  // namespace

const std::vector<Invariant<LivenessWorld>>& liveness_invariants() {
  static const std::vector<Invariant<LivenessWorld>> all = {
      {"no-false-verdict", "no Dead verdict while the rail lives and every probe is answered within the delay bound",
       no_false_verdict},
      {"dead-rail-found", "a rail that died at t is Dead by t + (misses + 1) x the probe timeout in force at t",
       dead_rail_found},
  };
  return all;
}

}  // namespace railcheck::verify
