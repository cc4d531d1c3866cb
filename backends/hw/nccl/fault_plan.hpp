#pragma once
// The fault injector behind RAILCHECK_NCCL_FAULT: it cuts a send comm's primary rail
// (FabricConnection::cut_rail) once the comm has sent N messages or lived T milliseconds, so
// failover can be exercised under real NCCL, where nothing else can reach into a connection.
//
//   RAILCHECK_NCCL_FAULT=cut-primary-after-msgs=N    N >= 1 isends on that comm
//   RAILCHECK_NCCL_FAULT=cut-primary-after-ms=T      T >= 0 ms since the comm became ready
//   optional suffix ",comms=K": only the first K send comms of the process get the fault
//   (default: every send comm, each on its own count or clock)
//
// Only send comms cut: the sender owns the failover decision in the engine (the receiver
// follows its PeerNotice), and a cut on either end breaks the same rail.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "engine/core/result.hpp"

namespace railcheck::nccl {

enum class FaultTrigger : std::uint8_t { AfterMessages, AfterMillis };

struct FaultPlan {
  FaultTrigger trigger = FaultTrigger::AfterMessages;
  std::uint64_t threshold = 0;  // messages or milliseconds
  std::uint32_t comms = 0;      // 0 = every send comm
  bool operator==(const FaultPlan&) const = default;
};

constexpr std::string_view kFaultVariable = "RAILCHECK_NCCL_FAULT";

// Empty text = no fault. Errors quote the text and show the accepted forms.
Result<std::optional<FaultPlan>> parse_fault_plan(std::string_view text);
std::string describe(const FaultPlan& plan);

// Per send comm: has its cut come due? Fires once.
class FaultClock {
 public:
  explicit FaultClock(FaultPlan plan) : plan_(plan) {}
  // `messages` isends so far, `elapsed_ms` since the comm became ready. `standbys_ready` (asked
  // only once the threshold is reached): whether every standby has finished its handshake. A cut
  // before that leaves the connection nowhere to go, so it fails (correctly) and the run tests no
  // failover: seen under ASan on a loaded 2-core machine, three streams per comm, the cut 41 ms
  // after the comm was ready. The cut waits for them.
  bool due(std::uint64_t messages, std::uint64_t elapsed_ms, const std::function<bool()>& standbys_ready = {});
  bool fired() const { return fired_; }

 private:
  FaultPlan plan_;
  bool fired_ = false;
};

}  // namespace railcheck::nccl
