#pragma once
// When a receiver sends its delivery ack (rc_completion_order.hpp point 3; issue 42).
//
// The ack is cumulative (the engine's delivered watermark), so one ack may answer many messages.
// A sender needs it promptly only where its user waits for it: a send the backend did not stage
// (staged_sends.hpp: larger than the staging limit, or no slot free) completes only on its ack.
// A staged send completed for its user when its bytes left; its ack only frees the copy kept for
// a replay. Acking every message at once, as before, cost each small message a second send on the
// receiver and a second receive on the sender (measured under NCCL on 2 x H200 over net: twice
// Socket's sendto and recvfrom calls per op, docs/nccl-plugin.md "Delivery acks, coalesced").
// So an ack goes out
//   * at once after a message larger than `prompt_above` landed (its send may be waiting), or
//     for every message when `prompt_above` is 0 (no staging: every send waits);
//   * once `every` messages wait for one, so a sender never runs out of staging slots;
//   * once the oldest unacknowledged message has waited `delay`, so a stream that stops is
//     acknowledged soon after (the sender's soft RTO is three orders of magnitude longer).
// The caller asks due() on each progress call (and the NCCL plugin's background thread calls
// progress on a comm that owes an ack while NCCL does not call it).
//
// Pure bookkeeping: tests/backends/hw/libfabric/delivery_ack_clock_test.cpp.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "engine/core/time.hpp"

namespace railcheck::fabric {

struct DeliveryAckTiming {
  std::size_t prompt_above = 0;  // bytes; 0 = ack every message at once
  std::uint64_t every = 8;       // messages waiting for an ack that make it due
  Nanos delay = us(250);         // how long the oldest may wait
};

class DeliveryAckClock {
 public:
  explicit DeliveryAckClock(DeliveryAckTiming t = {}) : t_(t) {}

  // A data message of `bytes` landed in a posted buffer.
  void landed(std::size_t bytes) {
    if (bytes > t_.prompt_above) prompt_ = true;
  }
  // `unacked` messages delivered since the last ack sent, at `now`: is an ack due?
  bool due(std::uint64_t unacked, Nanos now) {
    if (unacked == 0) {
      owed_since_.reset();
      return false;
    }
    if (prompt_ || t_.prompt_above == 0 || unacked >= t_.every) return true;
    if (!owed_since_) owed_since_ = now;
    return now - *owed_since_ >= t_.delay;
  }
  // Make the next due() true whatever is waiting: the connection is closing, and what it owes must
  // go before its endpoint does (the sender may wait on it, or hold replay copies until it comes).
  void owe_now() { prompt_ = true; }
  // The ack went out: nothing is owed until the next delivery.
  void sent() {
    owed_since_.reset();
    prompt_ = false;
  }
  const DeliveryAckTiming& timing() const { return t_; }

 private:
  DeliveryAckTiming t_;
  std::optional<Nanos> owed_since_;
  bool prompt_ = false;
};

}  // namespace railcheck::fabric
