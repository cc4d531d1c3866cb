#include "engine/failover/ha_tunables.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "engine/core/rc_timeouts.hpp"

namespace railcheck {
namespace {

#define RAILCHECK_QP_ROW(key, field, unit, min, max, env, help) TunableInfo{#key, env, unit, min, max, help},
#define RAILCHECK_ROW(key, type, field, value, unit, min, max, env, help) TunableInfo{#key, env, unit, min, max, help},
constexpr std::array kTable = {RAILCHECK_HA_QP_TUNABLES(RAILCHECK_QP_ROW) RAILCHECK_HA_TUNABLES(RAILCHECK_ROW)};
#undef RAILCHECK_ROW
#undef RAILCHECK_QP_ROW

Nanos ms_of(double v) { return Nanos{static_cast<std::int64_t>(std::llround(v * 1e6))}; }

// A field set from, and read as, a number: Nanos in milliseconds, bool as 0/1. The range check
// comes first (set_tunable), so the conversion to the field's type is always defined.
template <class T>
void assign_tunable_field(T& field, double v) {
  if constexpr (std::is_same_v<T, Nanos>)
    field = ms_of(v);
  else if constexpr (std::is_same_v<T, bool>)
    field = v != 0;
  else
    field = static_cast<T>(v);
}
template <class T>
double tunable_field_value(const T& field) {
  if constexpr (std::is_same_v<T, Nanos>)
    return to_millis(field);
  else if constexpr (std::is_same_v<T, bool>)
    return field ? 1 : 0;
  else
    return static_cast<double>(field);
}

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
    // Each key's range fits its field, and v is converted only for the field it sets: a value of
    // another key converted to a narrower type is undefined behaviour.
#define RAILCHECK_QP_SET(key_, field, ...) \
  if (key == #key_) assign_tunable_field(t.qp.field, v);
#define RAILCHECK_SET(key_, type, field, ...) \
  if (key == #key_) assign_tunable_field(t.field, v);
  RAILCHECK_HA_QP_TUNABLES(RAILCHECK_QP_SET)
  RAILCHECK_HA_TUNABLES(RAILCHECK_SET)
#undef RAILCHECK_SET
#undef RAILCHECK_QP_SET
  return true;
}

std::optional<double> get_tunable(const HaTunables& t, std::string_view key) {
#define RAILCHECK_QP_GET(key_, field, ...) \
  if (key == #key_) return tunable_field_value(t.qp.field);
#define RAILCHECK_GET(key_, type, field, ...) \
  if (key == #key_) return tunable_field_value(t.field);
  RAILCHECK_HA_QP_TUNABLES(RAILCHECK_QP_GET)
  RAILCHECK_HA_TUNABLES(RAILCHECK_GET)
#undef RAILCHECK_GET
#undef RAILCHECK_QP_GET
  return std::nullopt;
}

std::string tunable_doc_row(const TunableInfo& row) {
  const auto number = [](double v) { return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{}", v); };
  return fmt::format("| `{}` | {} | {} .. {} | {} | `{}` | {} |", row.key, number(*get_tunable(HaTunables{}, row.key)),
                     number(row.min), number(row.max), row.unit, row.env, row.help);
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
