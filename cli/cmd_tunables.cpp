#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck::cli {

int cmd_tunables(bool markdown) {
  const HaTunables defaults;
  if (markdown) {
    fmt::print("| key | default | range | unit | variable | meaning |\n|---|---|---|---|---|---|\n");
    fmt::print(
        "| `replay_policy` | {} | naive, probe, resync | policy | `HA_NCCL_REPLAY_POLICY` | which WRs are re-posted "
        "after failover (`engine/failover/replay_policy.hpp`) |\n",
        to_string(defaults.replay));
    for (const auto& t : tunable_table()) fmt::print("{}\n", tunable_doc_row(t));
    return kExitOk;
  }
  fmt::print("{:<24} {:<32} {:>10} {:<7} {:<17} {}\n", "[engine] key", "environment", "default", "unit", "range",
             "meaning");
  for (const auto& t : tunable_table()) {
    const double v = get_tunable(defaults, t.key).value_or(0);
    fmt::print("{:<24} {:<32} {:>10} {:<7} {:<17} {}\n", t.key, t.env, v, t.unit, fmt::format("{} .. {}", t.min, t.max),
               t.help);
  }
  fmt::print("{:<24} {:<32} {:>10} {:<7} {:<17} {}\n", "replay_policy", "HA_NCCL_REPLAY_POLICY",
             to_string(defaults.replay), "policy", "naive|probe|resync", "which WRs are replayed after a failover");
  fmt::print("\nsoft RTO in force by default: {} (hardware retry window x2, at least 1 s)\n",
             format_duration(defaults.initial_soft_rto()));
  return kExitOk;
}

}  // namespace railcheck::cli
