#include "engine/core/time.hpp"

#include <fmt/format.h>

namespace railcheck {

std::string format_duration(Nanos t) {
  const auto v = t.count();
  const auto mag = v < 0 ? -v : v;
  if (mag >= 1'000'000'000) return fmt::format("{:.3f} s", static_cast<double>(v) * 1e-9);
  if (mag >= 1'000'000) return fmt::format("{:.3f} ms", static_cast<double>(v) * 1e-6);
  if (mag >= 1'000) return fmt::format("{:.3f} us", static_cast<double>(v) * 1e-3);
  return fmt::format("{} ns", v);
}

}  // namespace railcheck
