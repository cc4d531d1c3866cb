// The plan-lifecycle world (verify/plan/lifecycle_world.hpp): NCCL's rules are clean over
// every interleaving within the bound; polling outside ncclLaunchPrepare frees a plan before
// its kernel is launched (or reclaims it twice), found with the steps that lead to it.
#include "verify/plan/lifecycle_world.hpp"

#include <catch2/catch.hpp>

namespace railcheck::plan {
namespace {

std::string steps(const LifecycleCheckResult& r) {
  std::string out;
  for (const auto& s : r.steps) out += "  " + s + "\n";
  return out;
}

TEST_CASE("NCCL's lifecycle rules reclaim every plan exactly once in every interleaving", "[verify][plan]") {
  const auto r = check_lifecycle_world(LifecycleBound{.launches = 3, .poll_anywhere = false});
  INFO(r.violation.value_or("clean") << "\n" << steps(r));
  CHECK_FALSE(r.violation.has_value());
  CHECK(r.paths > 100);
}

TEST_CASE("a callback poll between prepare and kernel launch frees a plan still in use", "[verify][plan]") {
  const auto r = check_lifecycle_world(LifecycleBound{.launches = 2, .poll_anywhere = true});
  REQUIRE(r.violation.has_value());
  INFO(*r.violation << "\n" << steps(r));
  CHECK_THAT(*r.violation, Catch::Contains("double reclaim") || Catch::Contains("use after reclaim"));
  CHECK(r.steps.size() >= 3);
}

}  // namespace
}  // namespace railcheck::plan
