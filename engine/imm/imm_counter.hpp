#pragma once
// ImmCounter: completion of one-sided writes without any ordering assumption (seed, first
// entry: "基于 ImmCounter 的同步机制"; TransferEngine, arXiv 2510.27656). Every WRITE carries a
// 32-bit immediate; the receiver counts arrivals per immediate value and an expectation "N
// writes with imm X" completes exactly once, when the N-th arrives, whatever the order. Writes
// may land before the receiver registers the expectation (SRD and multi-NIC sharding give no
// order between posting and landing), so arrivals are held until claimed.
//
// Each value is one-shot: once its expectation completes the value is retired, and any further
// arrival with it is an over-arrival (a duplicate, e.g. a replay after failover), reported at
// once. The application releases a retired value before reusing it.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::imm {

enum class ImmEvent : std::uint8_t {
  Waiting,      // counted; the expectation still needs more
  Held,         // counted before any expectation was registered
  Completed,    // this call completed the expectation (happens once per expectation)
  OverArrival,  // more writes than expected: the value was already complete, or expect() found
                // more held arrivals than it asks for
};

const char* to_string(ImmEvent e);

// What the counter found wrong when the transport has drained (no write still in flight).
struct ImmShortfall {
  std::uint32_t imm = 0;
  std::uint32_t expected = 0;  // 0: arrivals nobody expected
  std::uint32_t arrived = 0;
};

class ImmCounter {
 public:
  // Registers "count writes with imm". Fails on count 0 (nothing would ever fire) and on a value
  // that is still open or retired.
  Result<ImmEvent> expect(std::uint32_t imm, std::uint32_t count);
  ImmEvent on_arrival(std::uint32_t imm);
  // Makes a retired value usable again.
  Result<bool> release(std::uint32_t imm);

  bool completed(std::uint32_t imm) const;
  std::uint32_t arrived(std::uint32_t imm) const;
  std::uint32_t over_arrivals() const { return over_arrivals_; }
  // Once nothing is in flight: expectations that can never complete, and held arrivals no
  // expectation claimed. Sorted by imm.
  std::vector<ImmShortfall> audit() const;

 private:
  enum class SlotState : std::uint8_t { Holding, Open, Retired };
  struct Slot {
    SlotState state = SlotState::Holding;
    std::uint32_t arrived = 0;
    std::uint32_t expected = 0;
  };
  std::unordered_map<std::uint32_t, Slot> slots_;
  std::uint32_t over_arrivals_ = 0;
};

}  // namespace railcheck::imm
