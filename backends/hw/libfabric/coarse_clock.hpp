#pragma once
// PRIVATE to backends/hw/libfabric: the clock progress() asks "is anything due yet?" with.
//
// progress() runs once or twice per small message, and a precise clock read (steady_clock, a
// vDSO clock_gettime: ~24 ns on the 2-core EPYC VM, 10 % of a 64 B shm write's time in a perf
// profile) on every call was the largest single cost the engine path added to a WRITE_IMM
// (issue 32). The kernel's CLOCK_MONOTONIC_COARSE is the same time base as CLOCK_MONOTONIC (which
// steady_clock reads on Linux) as of the last tick: it costs a load from the vDSO page (~6 ns),
// is never ahead of the precise clock, and is behind it by about one tick (clock_getres: 1-4
// ms, by CONFIG_HZ; tick() pads that, resolution()). So "no timer is due before `deadline`" can be answered from it alone while
// coarse + tick < deadline; only near a deadline is the precise clock read.
#include <time.h>

#include <chrono>

#include "engine/core/time.hpp"

namespace railcheck::fabric {

class CoarseClock {
 public:
  explicit CoarseClock(std::chrono::steady_clock::time_point epoch)
      : epoch_ns_(std::chrono::duration_cast<Nanos>(epoch.time_since_epoch()).count()), tick_(resolution()) {}

  // Nanoseconds since the epoch, as of the last tick: now() - tick() < since_epoch() <= now().
  Nanos since_epoch() const {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return Nanos{static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec - epoch_ns_};
  }

  // How far behind the precise clock since_epoch() may be.
  Nanos tick() const { return tick_; }

 private:
  static Nanos resolution() {
    timespec r{};
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &r) != 0) return std::chrono::milliseconds(10);
    // Padded to three periods: the tick's update and our read are not atomic with each other, and
    // a vCPU that misses a timer tick leaves the coarse time a whole period older (8.022 ms behind
    // at a 4 ms resolution on the 2-core VM under load, 2026-11-29, when this was two periods).
    return Nanos{static_cast<std::int64_t>(r.tv_sec) * 1'000'000'000 + r.tv_nsec} * 3;
  }

  std::int64_t epoch_ns_;
  Nanos tick_;
};

}  // namespace railcheck::fabric
