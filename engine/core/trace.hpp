#pragma once
// What the engine reports about itself. Drivers stamp records with time and rank, print them,
// and turn them into summaries and timelines; tests assert on them.
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/ids.hpp"

namespace railcheck {

enum class TraceKind : std::uint8_t {
  PrimaryRts,          // phase 1 done: the comm is handed out
  StandbyReady,        // phase 2 done for one standby path
  PathFailed,          // a path was declared dead (detail says why)
  FailoverStarted,     // detail: the trigger (error completion status, soft RTO, peer notice)
  Drained,             // every WR on the failed QP has completed or flushed
  Switched,            // the active path changed
  MrRegisteredLazily,  // count: MRs registered on the new path's PD
  Replayed,            // count: WRs re-posted on the new path
  ResyncWatermark,     // count: the receiver's delivered watermark
  ProbeResult,         // count: how many probed messages had landed
  DuplicateDropped,    // receiver dropped a message it had already delivered
  HeartbeatMissed,     // a standby did not answer a ping in time
  FalseAlarm,          // a failed-over path answered quickly: the failover was not needed
  RtoWidened,          // count: new soft RTO in ms
  ConnectionFailed,    // no healthy path is left; requests fail with an error
  RailVerdict,         // the liveness detector's verdict changed (detail: verdict, RTT, timeout)
};

std::string_view to_string(TraceKind k);

struct TraceNote {
  TraceKind kind{};
  PathIndex path{};
  std::uint64_t count = 0;
  std::string detail;
};

}  // namespace railcheck
