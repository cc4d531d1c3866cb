// Engine assertions route to the handler the driver chose (engine/core/engine_assert.hpp).
#include "engine/core/engine_assert.hpp"

#include <catch2/catch.hpp>

namespace railcheck {

TEST_CASE("a failed engine assertion in record mode is counted and the first one kept") {
  set_assertion_mode(AssertionMode::Record);
  reset_assertion_failures();
  const int two = 2;
  CHECK(RAILCHECK_ASSERT(two == 2, "arithmetic"));
  CHECK(assertion_failures() == 0);
  CHECK_FALSE(RAILCHECK_ASSERT(two == 3, "the first rule"));
  CHECK_FALSE(RAILCHECK_ASSERT(two == 4, "the second rule"));
  CHECK(assertion_failures() == 2);
  CHECK(first_assertion_failure().describe().starts_with("the first rule (two == 3, "));
  set_assertion_mode(AssertionMode::Abort);
  reset_assertion_failures();
}

TEST_CASE("in fail-connection mode an assertion fence hands the failure to its connection") {
  set_assertion_mode(AssertionMode::FailConnection);
  reset_assertion_failures();
  std::string reason;
  {
    const AssertionFence fence([&](const AssertionFailure& a) { reason = a.describe(); });
    RAILCHECK_ASSERT(reason.size() == 1, "a broken rule");
  }
  CHECK(reason.starts_with("a broken rule"));
  reason.clear();
  {
    const AssertionFence fence([&](const AssertionFailure& a) { reason = a.describe(); });
  }
  CHECK(reason.empty());  // nothing failed inside this fence: the older failure is not handed on again
  set_assertion_mode(AssertionMode::Abort);
  reset_assertion_failures();
}

}  // namespace railcheck
