#pragma once
// The rail-liveness detector (issue 28): finds a dead rail in tens of milliseconds instead of
// waiting out the HCA's retry window (qp_timeout 14, retry 7: 537 ms), and never mistakes a
// busy rail or a busy peer for a dead one.
//
// How it decides (BFD, RFC 5880, in demand mode; the timeout is QUIC's PTO, RFC 9002 §6.2):
//   - Evidence of life: a successful data completion on the watched rail, or the answer to a
//     probe. While data completes, nothing is sent (demand mode).
//   - After `pto()` without evidence, a probe goes out: a one-sided operation (an 8-byte RDMA
//     READ of a registered word, or a zero-byte WRITE) on the rail's probe QP. The peer's NIC
//     answers it; the peer's CPU is not involved, so a peer process that stops polling still
//     answers, and an RNR-stalled receive queue does not hold it up (it is another QP).
//   - A probe unanswered after pto() is a miss, and the next probe goes out. `misses`
//     consecutive misses with no answer at all (late answers count) is the verdict Dead.
//   - pto() = clamp(srtt + rttvar_mult * rttvar, floor, max) from the probes' round trips
//     (RFC 6298 smoothing). Congestion shows as growing round trips: answers keep coming, late
//     ones still reset the misses, and the PTO grows with them. Only silence is death.
//
// Verdicts (RailVerdict): Alive (answers, RTT near its minimum), Congested (answers, RTT well
// above its minimum), Dead (misses in a row). A rail that answers while data does not complete
// is the receiver's problem (RNR, or a stalled peer process), never the rail's; HaConnection
// uses answered() to keep the soft RTO from failing over such a rail.
//
// Sans-IO: the caller passes "now" and carries out what on_check() returns. Proof bounds
// (docs/failover.md, verify/liveness_world.cpp): while every probe is answered within a bound
// (round trips at most D, changing by a bounded step per probe) there is no Dead verdict; a
// rail that goes silent at t is Dead by t + (misses + 1) * pto, pto as in force at t.
#include <cstdint>
#include <optional>
#include <string>

#include <boost/container/small_vector.hpp>

#include "engine/core/state_hash.hpp"
#include "engine/core/time.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck {

enum class RailVerdict : std::uint8_t { Alive, Congested, Dead };
std::string_view to_string(RailVerdict v);

class RailLiveness {
 public:
  struct Probe {
    std::uint64_t nonce = 0;
    Nanos sent{};
    bool counted = false;  // already counted as a miss
  };
  // What on_check() asks for.
  struct Check {
    std::optional<std::uint64_t> probe;  // send a probe with this nonce
    bool dead = false;                   // the verdict is Dead: fail over
    std::string why;                     // for the trace when dead
  };

  explicit RailLiveness(const HaTunables& t);

  // ---- getters ----
  bool enabled() const { return enabled_; }
  Nanos pto() const;
  std::optional<Nanos> srtt() const { return srtt_; }
  std::uint32_t misses() const { return misses_; }
  RailVerdict verdict() const { return verdict_; }
  // The rail gave evidence of life within `within` before now.
  bool answered(Nanos now, Nanos within) const { return now - last_alive_ <= within; }
  // When on_check() next has something to do.
  Nanos next_check() const;

  // ---- handle_* (input) ----
  // A successful data completion on the watched rail (demand mode: traffic is the probe).
  void handle_data_completion(Nanos now);
  // The peer's NIC answered probe `nonce`. Returns the verdict it leads to.
  RailVerdict handle_answer(Nanos now, std::uint64_t nonce);

  // ---- commands ----
  // Start watching a rail afresh (after a switch): its RTT history belongs to the old rail.
  void watch(Nanos now);
  // Work starts again on a rail that carried none: silence so far was no miss (demand mode
  // probes only while the sender expects completions).
  void resume(Nanos now);
  // The timer set for next_check() fired.
  Check on_check(Nanos now);
  // Drop the RTT adaptation (verify/mutation.cpp's DropRttAdaptation): pto() stays at the floor.
  void drop_rtt_adaptation() { adapt_ = false; }

  void hash_state(StateHasher& h, IdCounters counters) const;

 private:
  void sample(Nanos rtt);
  Nanos quiet_since() const;  // the later of the last sign of life and the newest probe

  bool enabled_;
  bool adapt_ = true;
  Nanos floor_;
  Nanos max_;
  double rttvar_mult_;
  double congested_ratio_;
  std::uint32_t limit_;

  std::optional<Nanos> srtt_;
  Nanos rttvar_{0};
  std::optional<Nanos> min_rtt_;
  Nanos last_alive_{0};
  boost::container::small_vector<Probe, 4> outstanding_;  // oldest first
  std::uint32_t misses_ = 0;
  std::uint64_t nonce_counter_ = 0;
  RailVerdict verdict_ = RailVerdict::Alive;
};

}  // namespace railcheck
