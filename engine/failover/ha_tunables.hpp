#pragma once
// Every knob of the HA connection, with its default, its range and the HA_NCCL_* variable the
// plugin reads it from (seed §3.4, §15.2, §16.2, §16.7). kTunableTable is the single home of
// defaults and ranges: the scenario loader, `railcheck tunables` and docs/ are built from it.
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

struct HaTunables {
  QpReliability qp{};                          // HA_NCCL_QP_TIMEOUT, HA_NCCL_QP_RETRY_CNT, HA_NCCL_QP_RNR_RETRY
  Nanos soft_rto = Nanos{0};                   // HA_NCCL_RTO_MS; 0 = auto: max(1000 ms, 2 x hardware window)
  Nanos soft_rto_max = ms(5000);               // HA_NCCL_RTO_MAX_MS: adaptive widening stops here (seed §16.7)
  double rto_backoff = 1.5;                    // HA_NCCL_RTO_BACKOFF
  std::uint32_t false_alarms_to_widen = 3;     // HA_NCCL_FALSE_ALARM_LIMIT
  Nanos false_alarm_window = ms(100);          // HA_NCCL_FALSE_ALARM_WINDOW_MS
  bool enable_backup = true;                   // HA_NCCL_ENABLE_BACKUP
  Nanos heartbeat_interval = ms(100);          // HA_NCCL_HEARTBEAT_MS
  std::uint32_t heartbeat_misses = 3;          // HA_NCCL_HEARTBEAT_MISSES: consecutive misses -> standby unhealthy
  Nanos control_timeout = ms(200);             // HA_NCCL_CONTROL_TIMEOUT_MS: wait for a resync/probe answer
  Nanos probe_delay = ms(10);                  // HA_NCCL_PROBE_DELAY_MS (NCCL's default for its probe)
  ReplayPolicy replay = ReplayPolicy::Resync;  // HA_NCCL_REPLAY_POLICY
  // Rail-liveness detector (engine/failover/rail_liveness.hpp, issue 28).
  bool liveness = true;                 // HA_NCCL_LIVENESS
  Nanos liveness_floor = ms(5);         // HA_NCCL_LIVENESS_FLOOR_MS: lowest probe timeout
  Nanos liveness_max = ms(250);         // HA_NCCL_LIVENESS_MAX_MS: highest probe timeout
  std::uint32_t liveness_misses = 3;    // HA_NCCL_LIVENESS_MISSES: consecutive misses -> dead
  double liveness_rttvar_mult = 4;      // HA_NCCL_LIVENESS_RTTVAR_MULT: pto = srtt + k * rttvar
  double liveness_congested_ratio = 4;  // HA_NCCL_LIVENESS_CONGESTED_RATIO: RTT / min RTT
  // Progress and budget knobs the plugin uses; the engine carries them so there is one home.
  std::uint32_t poll_batch = 32;              // HA_NCCL_POLL_BATCH
  std::uint32_t idle_spin_threshold = 1000;   // HA_NCCL_IDLE_SPIN_THRESHOLD
  std::uint32_t poll_standby_interval = 100;  // HA_NCCL_POLL_STANDBY_INTERVAL
  std::uint32_t test_max_poll = 32;           // HA_NCCL_TEST_MAX_POLL
  std::uint32_t expected_channels = 16;       // HA_NCCL_EXPECTED_CHANNELS
  std::uint32_t wr_per_conn = 64;             // HA_NCCL_WR_PER_CONN
  std::uint32_t max_recvs = 8;                // HA_NCCL_MAX_RECVS

  // The soft RTO actually in force at the start (resolves the "auto" default).
  Nanos initial_soft_rto() const;
};

// One row per tunable: the docs and `railcheck tunables` print this table.
struct TunableInfo {
  std::string_view key;   // scenario key under [engine]
  std::string_view env;   // HA_NCCL_* variable
  std::string_view unit;  // "ms", "count", "exp", "bool", "policy", "ratio"
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
