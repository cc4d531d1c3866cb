#pragma once
// The ImmCounter invariants (issue 5): the expectation fires exactly once; it fires only after
// every write has landed; a duplicate (a replayed copy of a write that had landed) is never
// counted twice.
#include <cstdint>
#include <string_view>
#include <vector>

#include "verify/imm/imm_schedule.hpp"

namespace railcheck::imm {

enum class ImmInvariant : std::uint8_t { FiresExactlyOnce, FiresAfterEveryWrite, NoDoubleCount };
inline constexpr std::size_t kImmInvariants = 3;

std::string_view to_string(ImmInvariant inv);
std::vector<ImmInvariant> violated(const ScheduleOutcome& o);

}  // namespace railcheck::imm
