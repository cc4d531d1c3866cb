#pragma once
// Strongly typed identifiers: a WrId cannot be passed where a RequestId is expected.
#include <compare>
#include <cstdint>
#include <functional>

namespace railcheck {

template <typename Tag, typename Rep = std::uint64_t>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

using RankId = StrongId<struct RankTag, std::uint32_t>;
// Index of a path inside one HA connection: 0 is the primary chosen at connect time.
using PathIndex = StrongId<struct PathTag, std::uint32_t>;
// A work request as posted to a QP. Replays get fresh WrIds so a stale completion from the
// failed QP can never be mistaken for the replay's completion.
using WrId = StrongId<struct WrTag>;
// A user-visible request (isend / irecv), stable across failovers.
using RequestId = StrongId<struct RequestTag>;
using TimerId = StrongId<struct TimerTag>;
using PdId = StrongId<struct PdTag, std::uint32_t>;
using MrId = StrongId<struct MrTag>;

}  // namespace railcheck

template <typename Tag, typename Rep>
struct std::hash<railcheck::StrongId<Tag, Rep>> {
  std::size_t operator()(const railcheck::StrongId<Tag, Rep>& id) const noexcept { return std::hash<Rep>{}(id.value); }
};
