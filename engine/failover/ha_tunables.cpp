#include "engine/failover/ha_tunables.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>

#include "engine/core/rc_timeouts.hpp"

namespace railcheck {
namespace {

constexpr std::array kTable = {
    TunableInfo{"qp_timeout", "HA_NCCL_QP_TIMEOUT", "exp", 1, 31,
                "RC local ACK timeout exponent: 4.096 us * 2^n per attempt"},
    TunableInfo{"qp_retry_cnt", "HA_NCCL_QP_RETRY_CNT", "count", 0, 7, "RC transport retries before RETRY_EXC_ERR"},
    TunableInfo{"qp_rnr_retry", "HA_NCCL_QP_RNR_RETRY", "count", 0, 7, "RC RNR retries; 7 = retry forever"},
    TunableInfo{"qp_min_rnr_timer", "HA_NCCL_QP_MIN_RNR_TIMER", "code", 0, 31, "IB min_rnr_timer code (12 = 0.64 ms)"},
    TunableInfo{"rto_ms", "HA_NCCL_RTO_MS", "ms", 0, 600000,
                "soft RTO; 0 = auto, max(1000 ms, 2x hardware retry window)"},
    TunableInfo{"rto_max_ms", "HA_NCCL_RTO_MAX_MS", "ms", 1, 600000, "cap for adaptive RTO widening (seed 16.7)"},
    TunableInfo{"rto_backoff", "HA_NCCL_RTO_BACKOFF", "ratio", 1, 10,
                "factor applied to the RTO on repeated false alarms"},
    TunableInfo{"false_alarm_limit", "HA_NCCL_FALSE_ALARM_LIMIT", "count", 1, 1000,
                "consecutive false alarms before the RTO widens"},
    TunableInfo{"false_alarm_window_ms", "HA_NCCL_FALSE_ALARM_WINDOW_MS", "ms", 0, 600000,
                "a failed path that answers within this time after failover was a false alarm"},
    TunableInfo{"enable_backup", "HA_NCCL_ENABLE_BACKUP", "bool", 0, 1, "0 = single path, no failover"},
    TunableInfo{"heartbeat_ms", "HA_NCCL_HEARTBEAT_MS", "ms", 1, 600000, "idle ping interval on standby paths"},
    TunableInfo{"heartbeat_misses", "HA_NCCL_HEARTBEAT_MISSES", "count", 1, 1000,
                "consecutive unanswered pings before a standby is unhealthy"},
    TunableInfo{"control_timeout_ms", "HA_NCCL_CONTROL_TIMEOUT_MS", "ms", 1, 600000,
                "how long failover waits for the peer's resync/probe answer before trying another path"},
    TunableInfo{"probe_delay_ms", "HA_NCCL_PROBE_DELAY_MS", "ms", 0, 600000,
                "probe policy: wait before reading the receiver's completion record"},
    TunableInfo{"liveness", "HA_NCCL_LIVENESS", "bool", 0, 1,
                "rail-liveness probes on the active rail; 0 = wait for the HCA's retry window or the soft RTO"},
    TunableInfo{"liveness_floor_ms", "HA_NCCL_LIVENESS_FLOOR_MS", "ms", 1, 60000,
                "lowest probe timeout; a silent rail is dead after (misses + 1) probe timeouts"},
    TunableInfo{"liveness_max_ms", "HA_NCCL_LIVENESS_MAX_MS", "ms", 1, 600000,
                "highest probe timeout, however slow the measured round trips"},
    TunableInfo{"liveness_misses", "HA_NCCL_LIVENESS_MISSES", "count", 1, 100,
                "consecutive unanswered probes before a rail is dead (BFD's detect multiplier)"},
    TunableInfo{"liveness_rttvar_mult", "HA_NCCL_LIVENESS_RTTVAR_MULT", "ratio", 1, 16,
                "probe timeout = smoothed RTT + this x RTT variation (RFC 6298: 4)"},
    TunableInfo{"liveness_congested_ratio", "HA_NCCL_LIVENESS_CONGESTED_RATIO", "ratio", 1, 1000,
                "a probe answered this many times slower than the rail's fastest marks it congested"},
    TunableInfo{"poll_batch", "HA_NCCL_POLL_BATCH", "count", 1, 4096, "CQEs per poll"},
    TunableInfo{"idle_spin_threshold", "HA_NCCL_IDLE_SPIN_THRESHOLD", "count", 0, 1e9, "empty polls before sleeping"},
    TunableInfo{"poll_standby_interval", "HA_NCCL_POLL_STANDBY_INTERVAL", "count", 1, 1e6,
                "primary polls per standby poll"},
    TunableInfo{"test_max_poll", "HA_NCCL_TEST_MAX_POLL", "count", 1, 4096, "CQEs handled per test() call"},
    TunableInfo{"expected_channels", "HA_NCCL_EXPECTED_CHANNELS", "count", 1, 64, "channels in the maxComms budget"},
    TunableInfo{"wr_per_conn", "HA_NCCL_WR_PER_CONN", "count", 1, 65536, "in-flight WRs per connection (budget)"},
    TunableInfo{"max_recvs", "HA_NCCL_MAX_RECVS", "count", 1, 8, "grouped receive width reported to NCCL"},
};

Nanos ms_of(double v) { return Nanos{static_cast<std::int64_t>(std::llround(v * 1e6))}; }

}  // namespace

std::span<const TunableInfo> tunable_table() { return kTable; }

const TunableInfo* find_tunable(std::string_view key) {
  for (const auto& t : kTable)
    if (t.key == key) return &t;
  return nullptr;
}

Nanos HaTunables::initial_soft_rto() const {
  if (soft_rto > Nanos{0}) return soft_rto;
  const Nanos twice = 2 * hardware_retry_window(qp);
  return twice > ms(1000) ? twice : ms(1000);
}

Result<bool> set_tunable(HaTunables& t, std::string_view key, double v) {
  const TunableInfo* info = find_tunable(key);
  if (info == nullptr) return Error{fmt::format("unknown engine tunable '{}'", key), "see `railcheck tunables`"};
  if (!(v >= info->min && v <= info->max))
    return Error{fmt::format("{} = {} is out of range", key, v),
                 fmt::format("expected {} .. {} {}", info->min, info->max, info->unit)};
  if (info->unit != std::string_view{"ratio"} && v != std::floor(v))
    return Error{fmt::format("{} = {} must be a whole number", key, v), ""};
  // Each key's range fits its field, but v is converted only for the field it sets: a value of
  // another key converted to a narrower type is undefined behaviour.
  const auto u8 = [v] { return static_cast<std::uint8_t>(v); };
  const auto u32 = [v] { return static_cast<std::uint32_t>(v); };
  if (key == "qp_timeout")
    t.qp.timeout = u8();
  else if (key == "qp_retry_cnt")
    t.qp.retry_cnt = u8();
  else if (key == "qp_rnr_retry")
    t.qp.rnr_retry = u8();
  else if (key == "qp_min_rnr_timer")
    t.qp.min_rnr_timer = u8();
  else if (key == "rto_ms")
    t.soft_rto = ms_of(v);
  else if (key == "rto_max_ms")
    t.soft_rto_max = ms_of(v);
  else if (key == "rto_backoff")
    t.rto_backoff = v;
  else if (key == "false_alarm_limit")
    t.false_alarms_to_widen = u32();
  else if (key == "false_alarm_window_ms")
    t.false_alarm_window = ms_of(v);
  else if (key == "enable_backup")
    t.enable_backup = v != 0;
  else if (key == "heartbeat_ms")
    t.heartbeat_interval = ms_of(v);
  else if (key == "heartbeat_misses")
    t.heartbeat_misses = u32();
  else if (key == "control_timeout_ms")
    t.control_timeout = ms_of(v);
  else if (key == "probe_delay_ms")
    t.probe_delay = ms_of(v);
  else if (key == "liveness")
    t.liveness = v != 0;
  else if (key == "liveness_floor_ms")
    t.liveness_floor = ms_of(v);
  else if (key == "liveness_max_ms")
    t.liveness_max = ms_of(v);
  else if (key == "liveness_misses")
    t.liveness_misses = u32();
  else if (key == "liveness_rttvar_mult")
    t.liveness_rttvar_mult = v;
  else if (key == "liveness_congested_ratio")
    t.liveness_congested_ratio = v;
  else if (key == "poll_batch")
    t.poll_batch = u32();
  else if (key == "idle_spin_threshold")
    t.idle_spin_threshold = u32();
  else if (key == "poll_standby_interval")
    t.poll_standby_interval = u32();
  else if (key == "test_max_poll")
    t.test_max_poll = u32();
  else if (key == "expected_channels")
    t.expected_channels = u32();
  else if (key == "wr_per_conn")
    t.wr_per_conn = u32();
  else if (key == "max_recvs")
    t.max_recvs = u32();
  return true;
}

std::optional<double> get_tunable(const HaTunables& t, std::string_view key) {
  if (key == "qp_timeout") return t.qp.timeout;
  if (key == "qp_retry_cnt") return t.qp.retry_cnt;
  if (key == "qp_rnr_retry") return t.qp.rnr_retry;
  if (key == "qp_min_rnr_timer") return t.qp.min_rnr_timer;
  if (key == "rto_ms") return to_millis(t.soft_rto);
  if (key == "rto_max_ms") return to_millis(t.soft_rto_max);
  if (key == "rto_backoff") return t.rto_backoff;
  if (key == "false_alarm_limit") return t.false_alarms_to_widen;
  if (key == "false_alarm_window_ms") return to_millis(t.false_alarm_window);
  if (key == "enable_backup") return t.enable_backup ? 1 : 0;
  if (key == "heartbeat_ms") return to_millis(t.heartbeat_interval);
  if (key == "heartbeat_misses") return t.heartbeat_misses;
  if (key == "control_timeout_ms") return to_millis(t.control_timeout);
  if (key == "probe_delay_ms") return to_millis(t.probe_delay);
  if (key == "liveness") return t.liveness ? 1 : 0;
  if (key == "liveness_floor_ms") return to_millis(t.liveness_floor);
  if (key == "liveness_max_ms") return to_millis(t.liveness_max);
  if (key == "liveness_misses") return t.liveness_misses;
  if (key == "liveness_rttvar_mult") return t.liveness_rttvar_mult;
  if (key == "liveness_congested_ratio") return t.liveness_congested_ratio;
  if (key == "poll_batch") return t.poll_batch;
  if (key == "idle_spin_threshold") return t.idle_spin_threshold;
  if (key == "poll_standby_interval") return t.poll_standby_interval;
  if (key == "test_max_poll") return t.test_max_poll;
  if (key == "expected_channels") return t.expected_channels;
  if (key == "wr_per_conn") return t.wr_per_conn;
  if (key == "max_recvs") return t.max_recvs;
  return std::nullopt;
}

Result<bool> apply_environment(HaTunables& t, const EnvLookup& lookup, std::span<const std::string> names_present) {
  for (const auto& name : names_present) {
    if (name.rfind("HA_NCCL_", 0) != 0) continue;
    const char* raw = lookup(name.c_str());
    if (raw == nullptr) continue;
    const std::string value(raw);
    if (name == "HA_NCCL_REPLAY_POLICY") {
      auto p = parse_replay_policy(value);
      if (!p) return Error{fmt::format("{}={}: unknown replay policy", name, value), "use naive, probe or resync"};
      t.replay = *p;
      continue;
    }
    const TunableInfo* info = nullptr;
    for (const auto& row : kTable)
      if (row.env == name) info = &row;
    if (info == nullptr)
      return Error{fmt::format("unknown variable {}", name), "see `railcheck tunables` for the HA_NCCL_* names"};
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end == nullptr || *end != '\0')
      return Error{fmt::format("{}={}: not a number", name, value),
                   fmt::format("expected {} .. {} {}", info->min, info->max, info->unit)};
    auto set = set_tunable(t, info->key, v);
    if (!set) return Error{fmt::format("{}: {}", name, set.error().what), set.error().hint};
  }
  return validate(t);
}

Result<bool> validate(const HaTunables& t) {
  const Nanos rto = t.initial_soft_rto();
  if (t.soft_rto_max < rto)
    return Error{
        fmt::format("rto_max_ms {} is below the soft RTO {}", format_duration(t.soft_rto_max), format_duration(rto)),
        "raise rto_max_ms"};
  if (t.liveness_max < t.liveness_floor)
    return Error{fmt::format("liveness_max_ms {} is below liveness_floor_ms {}", format_duration(t.liveness_max),
                             format_duration(t.liveness_floor)),
                 "raise liveness_max_ms"};
  return true;
}

std::vector<std::string> advisories(const HaTunables& t) {
  std::vector<std::string> out;
  const Nanos window = hardware_retry_window(t.qp);
  const Nanos rto = t.initial_soft_rto();
  if (rto < 2 * window)
    out.push_back(
        fmt::format("soft RTO {} is below 2x the hardware retry window {} (qp_timeout={}, qp_retry_cnt={}): "
                    "the soft RTO may fire while the HCA is still retrying (seed 3.4)",
                    format_duration(rto), format_duration(window), t.qp.timeout, t.qp.retry_cnt));
  return out;
}

}  // namespace railcheck
