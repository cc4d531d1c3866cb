#include "engine/core/engine_assert.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace railcheck {
namespace {

std::atomic<AssertionMode> g_mode{AssertionMode::Abort};
thread_local std::uint64_t tl_failures = 0;
thread_local AssertionFailure tl_first;

}  // namespace

std::string AssertionFailure::describe() const { return fmt::format("{} ({}, {}:{})", why, expr, file, line); }

void set_assertion_mode(AssertionMode m) { g_mode.store(m, std::memory_order_relaxed); }

AssertionMode assertion_mode() { return g_mode.load(std::memory_order_relaxed); }

std::uint64_t assertion_failures() { return tl_failures; }

void reset_assertion_failures() { tl_failures = 0; }

const AssertionFailure& first_assertion_failure() { return tl_first; }

bool assertion_failed(const AssertionFailure& f) {
  if (assertion_mode() == AssertionMode::Abort) {
    std::fprintf(stderr, "railcheck: engine assertion failed: %s\n", f.describe().c_str());
    std::abort();
  }
  if (tl_failures++ == 0) tl_first = f;
  return false;
}

}  // namespace railcheck
