#pragma once
// Simulated or wall time as seen by the engine. The engine never reads a clock: every entry
// point takes "now" as an argument, so a run is a pure function of its inputs.
#include <chrono>
#include <cstdint>
#include <string>

namespace railcheck {

using Nanos = std::chrono::duration<std::int64_t, std::nano>;

constexpr Nanos ns(std::int64_t v) { return Nanos{v}; }
constexpr Nanos us(std::int64_t v) { return Nanos{v * 1'000}; }
constexpr Nanos ms(std::int64_t v) { return Nanos{v * 1'000'000}; }
constexpr Nanos sec(std::int64_t v) { return Nanos{v * 1'000'000'000}; }

// Conversions for drivers that speak seconds (SimGrid) or milliseconds (reports).
constexpr double to_seconds(Nanos t) { return static_cast<double>(t.count()) * 1e-9; }
constexpr double to_millis(Nanos t) { return static_cast<double>(t.count()) * 1e-6; }
inline Nanos from_seconds(double s) { return Nanos{static_cast<std::int64_t>(s * 1e9 + (s >= 0 ? 0.5 : -0.5))}; }

// "12.345 ms" style, for human summaries.
std::string format_duration(Nanos t);

}  // namespace railcheck
