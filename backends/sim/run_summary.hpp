#pragma once
// What a simulated run reports: when the fault hit, when and how it was detected, when the
// connection switched, what was replayed, and whether every message arrived exactly once.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/sim/sim_world.hpp"

namespace railcheck::sim {

enum class RunOutcome : std::uint8_t {
  Delivered,         // every message delivered exactly once, in order
  ConnectionFailed,  // a connection reported a clean error (all paths dead)
  Corrupted,         // a duplicate, a misplaced message or an empty buffer was delivered
  Hung,              // the time limit passed with work outstanding and no error reported
};
std::string_view to_string(RunOutcome o);

struct RunSummary {
  std::string scenario;
  std::uint64_t seed = 0;
  std::string replay_policy;
  RunOutcome outcome = RunOutcome::Delivered;
  std::string outcome_detail;

  std::optional<Nanos> fault_at;     // first link down
  std::optional<Nanos> disturbance_at;  // first fault that is no outage (jitter, partial loss, a stall, ...)
  std::optional<Nanos> detected_at;  // first failover start
  std::string detected_by;           // "error completion: RETRY_EXC_ERR", "soft RTO: ...", ...
  std::optional<Nanos> switched_at;  // first switch of active path
  std::optional<Nanos> flowing_at;   // first message delivered at or after that switch
  // Failovers no outage called for: every one in a scenario without a link down, flap or
  // one-way cut (congestion, RNR, a stalled peer, jitter, partial loss), and any before the
  // first outage otherwise. The liveness sweep wants 0 (issue 28).
  std::uint32_t false_failovers = 0;
  std::uint32_t failovers = 0;       // failover sequences started by senders
  std::uint64_t wrs_replayed = 0;    // sends re-posted by senders
  std::uint64_t recvs_reposted = 0;  // receives re-posted by receivers
  std::uint32_t false_alarms = 0;
  std::uint32_t rto_widenings = 0;
  std::uint32_t connections = 0;
  std::uint32_t connections_failed = 0;
  std::optional<Nanos> failed_at;  // the first connection that reported an error to the caller
  std::uint32_t connections_switched = 0;

  std::uint64_t messages_expected = 0;
  std::uint64_t messages_delivered = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t misplaced = 0;
  std::uint64_t delivered_after_fault = 0;  // of messages_delivered, those at or after fault_at
  std::uint64_t lost = 0;        // expected but never delivered (includes failed requests)
  double gbps_before_fault = 0;  // delivered payload rate before the fault
  double gbps_after_switch = 0;  // delivered payload rate after the first switch
  double gbps_after_flowing = 0;  // the same bytes over the time from flowing_at: the rate once traffic resumed
  Nanos end_time{};              // simulated time at the end of the run
  double wall_seconds = 0;
  SimCounters counters;
};

RunSummary summarize(SimWorld& w, std::uint64_t seed, double wall_seconds);
nlohmann::json to_json(const RunSummary& s);
std::string to_text(const RunSummary& s);

}  // namespace railcheck::sim
