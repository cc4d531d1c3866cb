#pragma once
// The liveness world (issue 28): the real rail-liveness detector (engine/failover/
// rail_liveness.hpp) watching one rail whose probes the network answers after a round trip it
// picks, or loses, and which may die at any instant. Time is explicit; every round trip,
// loss and death is a Choice, so the checker walks every timing the bound allows.
//
// The bound on delay is the one a detector can honour: each probe's round trip is at most
// `rtt_max`, and differs from the previous probe's by at most `rtt_step` (queues fill at a
// finite rate). A jump from microseconds to `rtt_max` in one probe is indistinguishable from a
// dead rail for (misses + 1) probe timeouts, and no detector that is fast can wait it out.
//
// Invariants (liveness_invariants()):
//   no-false-verdict   while the rail lives and every probe is answered within the bound, the
//                      detector never says Dead (the mutation drop-rtt-adaptation breaks it);
//   dead-rail-found    a rail that died at t is Dead by t + (misses + 1) x the probe timeout
//                      in force at t.
// Exactly-once delivery whatever the detector decides is the failover world's to check
// (failover_world.hpp, `probes`): there a verdict is one more trigger of the same sequence.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "engine/failover/rail_liveness.hpp"
#include "verify/invariant.hpp"
#include "verify/mutation.hpp"

namespace railcheck::verify {

struct LivenessModel {
  // the detector (small numbers: the state space grows with horizon / floor)
  Nanos floor = ms(2);
  Nanos max = ms(100);
  std::uint32_t misses = 2;
  // the network's bound
  Nanos rtt_min = ms(1);
  Nanos rtt_max = ms(10);
  Nanos rtt_step = ms(1);
  std::uint32_t deaths = 1;  // the rail may die (for good) this many times: 0 or 1
  std::uint32_t losses = 0;  // probes lost on a live rail
  Nanos horizon = ms(40);
  Mutation mutation = Mutation::None;

  HaTunables tunables() const;
};

class LivenessWorld {
 public:
  struct ChoiceType {
    enum class Kind : std::uint8_t { Answer, Lose, Kill, Advance } kind = Kind::Advance;
    Nanos rtt{};  // Answer: the pending probe's round trip
    bool operator==(const ChoiceType&) const = default;
  };

  explicit LivenessWorld(const LivenessModel& m);

  std::vector<ChoiceType> choices() const;
  void apply(const ChoiceType& c);
  std::uint64_t fingerprint() const;

  // ---- observations for invariants ----
  const LivenessModel& model() const { return model_; }
  const RailLiveness& detector() const { return det_; }
  Nanos now() const { return now_; }
  std::optional<Nanos> died_at() const { return died_at_; }
  std::optional<Nanos> pto_at_death() const { return pto_at_death_; }
  std::optional<Nanos> dead_at() const { return dead_at_; }
  std::uint32_t losses() const { return losses_; }
  Nanos last_rtt() const { return last_rtt_; }

 private:
  struct Flight {
    std::uint64_t nonce = 0;
    Nanos answer_at{};
  };
  std::optional<Nanos> next_event() const;

  LivenessModel model_;
  RailLiveness det_;
  Nanos now_{0};
  std::optional<std::uint64_t> pending_;  // a probe just sent, its fate not yet chosen
  boost::container::small_vector<Flight, 4> flights_;
  Nanos last_rtt_;
  std::optional<Nanos> died_at_;
  std::optional<Nanos> pto_at_death_;
  std::optional<Nanos> dead_at_;
  std::uint32_t deaths_ = 0;
  std::uint32_t losses_ = 0;
};

const std::vector<Invariant<LivenessWorld>>& liveness_invariants();

}  // namespace railcheck::verify
