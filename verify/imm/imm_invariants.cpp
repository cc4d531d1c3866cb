#include "verify/imm/imm_invariants.hpp"

namespace railcheck::imm {

std::string_view to_string(ImmInvariant inv) {
  switch (inv) {
    case ImmInvariant::FiresExactlyOnce: return "fires-exactly-once";
    case ImmInvariant::FiresAfterEveryWrite: return "fires-after-every-write";
    case ImmInvariant::NoDoubleCount: return "no-double-count";
  }
  return "?";
}

std::vector<ImmInvariant> violated(const ScheduleOutcome& o) {
  std::vector<ImmInvariant> out;
  if (o.completions != 1) out.push_back(ImmInvariant::FiresExactlyOnce);
  if (o.fired_with_writes_missing) out.push_back(ImmInvariant::FiresAfterEveryWrite);
  if (o.max_counted_copies > 1) out.push_back(ImmInvariant::NoDoubleCount);
  return out;
}

}  // namespace railcheck::imm
