// CoarseClock (backends/hw/libfabric/coarse_clock.hpp): progress() decides from it that no timer
// can be due yet, so it must never run ahead of the precise clock and never lag it by a tick or
// more; otherwise a timer would fire early, or late by more than the documented bound.
#include "backends/hw/libfabric/coarse_clock.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <limits>

using namespace railcheck;

TEST_CASE("the coarse clock is never ahead of steady_clock and lags it by less than a tick", "[fabric][clock]") {
  const auto epoch = std::chrono::steady_clock::now();
  const fabric::CoarseClock clock(epoch);
  REQUIRE(clock.tick() > Nanos{0});
  REQUIRE(clock.tick() <= std::chrono::milliseconds(100));
  Nanos last{std::numeric_limits<std::int64_t>::min()};
  Nanos most_ahead = Nanos::min(), most_behind{0};
  bool monotonic = true;
  const auto until = epoch + std::chrono::milliseconds(30);  // several ticks at HZ 250-1000
  while (std::chrono::steady_clock::now() < until) {
    const Nanos before = std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now() - epoch);
    const Nanos coarse = clock.since_epoch();
    const Nanos after = std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now() - epoch);
    most_ahead = std::max(most_ahead, coarse - after);
    most_behind = std::max(most_behind, before - coarse);
    monotonic = monotonic && coarse >= last;
    last = coarse;
  }
  CHECK(most_ahead <= Nanos{0});
  CHECK(most_behind < clock.tick());
  CHECK(monotonic);
  CHECK(last > Nanos{0});  // it advanced past the epoch's tick
}
