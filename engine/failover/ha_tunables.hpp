#pragma once
// Every knob of the HA connection, with its default, its range and the HA_NCCL_* variable the
// plugin reads it from (seed §3.4, §15.2, §16.2, §16.7). RAILCHECK_HA_TUNABLES below is the single
// home of each knob: the struct, the parser, `railcheck tunables` and docs/ are built from it.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/qp_endpoint.hpp"
#include "engine/core/result.hpp"
#include "engine/core/time.hpp"
#include "engine/failover/replay_policy.hpp"

namespace railcheck {

// Every knob, one line each: X(key, type, field, default, unit, min, max, env, help).
//   key      the scenario key under [engine] (and `railcheck tunables`' first column)
//   field    the HaTunables member, declared from this line with `default`
//   unit     "ms" (a Nanos field, set and read in milliseconds), "count", "bool", "ratio"
//   min, max the inclusive range set_tunable() checks; "ratio" alone may be fractional
//   env      the HA_NCCL_* variable the NCCL plugin reads (HA_NCCL_ and the key in capitals)
// The struct, set_tunable/get_tunable, tunable_table() (the parser of scenario files and of the
// environment, `railcheck tunables`, the docs table) all expand this list: adding a knob is one
// line here plus its test. The RC QP attributes are RAILCHECK_HA_QP_TUNABLES (below): their
// fields and defaults are QpReliability's, shared with the RC timing model in engine/core.
#define RAILCHECK_HA_TUNABLES(X)                                                                                       \
  X(rto_ms, Nanos, soft_rto, Nanos{0}, "ms", 0, 600000, "HA_NCCL_RTO_MS",                                              \
    "soft RTO; 0 = auto: max(1000 ms, 2 x hardware retry window), 1074 ms with the defaults")                          \
  X(rto_max_ms, Nanos, soft_rto_max, ms(5000), "ms", 1, 600000, "HA_NCCL_RTO_MAX_MS",                                  \
    "cap for adaptive RTO widening (seed 16.7); must not be below the soft RTO")                                       \
  X(rto_backoff, double, rto_backoff, 1.5, "ratio", 1, 10, "HA_NCCL_RTO_BACKOFF",                                      \
    "factor applied to the RTO on repeated false alarms")                                                              \
  X(false_alarm_limit, std::uint32_t, false_alarms_to_widen, 3, "count", 1, 1000, "HA_NCCL_FALSE_ALARM_LIMIT",         \
    "consecutive false alarms before the RTO widens")                                                                  \
  X(false_alarm_window_ms, Nanos, false_alarm_window, ms(100), "ms", 0, 600000, "HA_NCCL_FALSE_ALARM_WINDOW_MS",       \
    "a failed path that answers within this time after failover was a false alarm")                                    \
  X(enable_backup, bool, enable_backup, true, "bool", 0, 1, "HA_NCCL_ENABLE_BACKUP", "0 = single path, no failover")   \
  X(heartbeat_ms, Nanos, heartbeat_interval, ms(100), "ms", 1, 600000, "HA_NCCL_HEARTBEAT_MS",                         \
    "ping interval on standby paths (while the connection is idle) and on dead paths")                                 \
  X(heartbeat_misses, std::uint32_t, heartbeat_misses, 3, "count", 1, 1000, "HA_NCCL_HEARTBEAT_MISSES",                \
    "consecutive unanswered pings before a standby is no longer a failover candidate")                                 \
  X(control_timeout_ms, Nanos, control_timeout, ms(200), "ms", 1, 600000, "HA_NCCL_CONTROL_TIMEOUT_MS",                \
    "how long failover waits for the peer's resync/probe answer before trying another path")                           \
  X(probe_delay_ms, Nanos, probe_delay, ms(10), "ms", 0, 600000, "HA_NCCL_PROBE_DELAY_MS",                             \
    "probe policy: wait before reading the receiver's completion record (NCCL's default)")                             \
  X(liveness, bool, liveness, true, "bool", 0, 1, "HA_NCCL_LIVENESS",                                                  \
    "rail-liveness probes on the active rail (docs/failover.md); 0 = wait for the HCA's retry window or the soft RTO") \
  X(liveness_floor_ms, Nanos, liveness_floor, ms(5), "ms", 1, 60000, "HA_NCCL_LIVENESS_FLOOR_MS",                      \
    "lowest probe timeout; a silent rail is dead after (misses + 1) probe timeouts (20 ms with the defaults)")         \
  X(liveness_max_ms, Nanos, liveness_max, ms(250), "ms", 1, 600000, "HA_NCCL_LIVENESS_MAX_MS",                         \
    "highest probe timeout, however slow the measured round trips; not below `liveness_floor_ms`")                     \
  X(liveness_misses, std::uint32_t, liveness_misses, 3, "count", 1, 100, "HA_NCCL_LIVENESS_MISSES",                    \
    "consecutive unanswered probes before a rail is dead (BFD's detect multiplier)")                                   \
  X(liveness_rttvar_mult, double, liveness_rttvar_mult, 4, "ratio", 1, 16, "HA_NCCL_LIVENESS_RTTVAR_MULT",             \
    "probe timeout = smoothed RTT + this x RTT variation (RFC 6298: 4)")                                               \
  X(liveness_congested_ratio, double, liveness_congested_ratio, 4, "ratio", 1, 1000,                                   \
    "HA_NCCL_LIVENESS_CONGESTED_RATIO",                                                                                \
    "a probe answered this many times slower than the rail's fastest marks it congested (trace only)")                 \
  X(poll_batch, std::uint32_t, poll_batch, 32, "count", 1, 4096, "HA_NCCL_POLL_BATCH", "CQEs per poll")                \
  X(idle_spin_threshold, std::uint32_t, idle_spin_threshold, 1000, "count", 0, 1e9, "HA_NCCL_IDLE_SPIN_THRESHOLD",     \
    "empty polls before sleeping")                                                                                     \
  X(poll_standby_interval, std::uint32_t, poll_standby_interval, 100, "count", 1, 1e6,                                 \
    "HA_NCCL_POLL_STANDBY_INTERVAL", "primary polls per standby poll")                                                 \
  X(test_max_poll, std::uint32_t, test_max_poll, 32, "count", 1, 4096, "HA_NCCL_TEST_MAX_POLL",                        \
    "CQEs handled per test() call")                                                                                    \
  X(expected_channels, std::uint32_t, expected_channels, 16, "count", 1, 64, "HA_NCCL_EXPECTED_CHANNELS",              \
    "channels in the maxComms budget")                                                                                 \
  X(wr_per_conn, std::uint32_t, wr_per_conn, 64, "count", 1, 65536, "HA_NCCL_WR_PER_CONN",                             \
    "in-flight WRs per connection (budget)")                                                                           \
  X(max_recvs, std::uint32_t, max_recvs, 8, "count", 1, 8, "HA_NCCL_MAX_RECVS",                                        \
    "grouped receive width reported to NCCL")

// The RC QP attributes, one line each: X(key, field of QpReliability, unit, min, max, env, help).
#define RAILCHECK_HA_QP_TUNABLES(X)                                                                      \
  X(qp_timeout, timeout, "exp", 1, 31, "HA_NCCL_QP_TIMEOUT",                                             \
    "RC local ACK timeout exponent: 4.096 us x 2^n per attempt (14: 67.1 ms)")                           \
  X(qp_retry_cnt, retry_cnt, "count", 0, 7, "HA_NCCL_QP_RETRY_CNT",                                      \
    "RC transport retries before RETRY_EXC_ERR (14 and 7: a 537 ms hardware window)")                    \
  X(qp_rnr_retry, rnr_retry, "count", 0, 7, "HA_NCCL_QP_RNR_RETRY", "RC RNR retries; 7 = retry forever") \
  X(qp_min_rnr_timer, min_rnr_timer, "code", 0, 31, "HA_NCCL_QP_MIN_RNR_TIMER", "IB min_rnr_timer code (12 = 0.64 ms)")

struct HaTunables {
  QpReliability qp{};  // RAILCHECK_HA_QP_TUNABLES: HA_NCCL_QP_TIMEOUT, _RETRY_CNT, _RNR_RETRY, _MIN_RNR_TIMER
#define RAILCHECK_HA_TUNABLE_FIELD(key, type, field, value, ...) type field = value;
  RAILCHECK_HA_TUNABLES(RAILCHECK_HA_TUNABLE_FIELD)
#undef RAILCHECK_HA_TUNABLE_FIELD
  // A name, not a number: its own parser (parse_replay_policy), its own line in `tunables`.
  ReplayPolicy replay = ReplayPolicy::Resync;  // HA_NCCL_REPLAY_POLICY

  // The soft RTO actually in force at the start (resolves the "auto" default).
  Nanos initial_soft_rto() const;
};

// One row per tunable (RAILCHECK_HA_QP_TUNABLES, then RAILCHECK_HA_TUNABLES, in their order):
// the scenario loader, the environment, `railcheck tunables` and the docs read this table.
struct TunableInfo {
  std::string_view key;   // scenario key under [engine]
  std::string_view env;   // HA_NCCL_* variable
  std::string_view unit;  // "ms", "count", "exp", "code", "bool", "IB min_rnr_timer code (12 = 0.64 ms)"
  double min;             // inclusive range (for numbers)
  double max;
  std::string_view help;
};
std::span<const TunableInfo> tunable_table();
const TunableInfo* find_tunable(std::string_view key);

// Set one tunable from a number (bool as 0/1; the policy has its own setter). Checks the range.
Result<bool> set_tunable(HaTunables& t, std::string_view key, double value);
// Current value as a number, for printing and sweeps.
std::optional<double> get_tunable(const HaTunables& t, std::string_view key);
// The row of docs/scenarios.md's [engine] table for one tunable, with its default
// (`railcheck tunables --markdown` prints them all; a test holds the docs to them).
std::string tunable_doc_row(const TunableInfo& row);
// Apply HA_NCCL_* variables, as the NCCL plugin does at init. `lookup` is getenv or a test's
// map: the engine itself never reads the environment. Unknown HA_NCCL_* names are errors, so a
// typo does not silently leave a default in force.
using EnvLookup = std::function<const char*(const char*)>;
Result<bool> apply_environment(HaTunables& t, const EnvLookup& lookup, std::span<const std::string> names_present);

// Cross-field checks that make a configuration unusable.
Result<bool> validate(const HaTunables& t);
// Legal but questionable settings (a soft RTO that races the HCA): printed as warnings, since
// the RTO calibration study sweeps exactly those on purpose.
std::vector<std::string> advisories(const HaTunables& t);

}  // namespace railcheck
