#pragma once
// The failover world's invariants (docs/verify.md explains each and how to add one).
#include <vector>

#include "verify/failover_world.hpp"
#include "verify/invariant.hpp"

namespace railcheck::verify {

// All of them, in the order they are checked.
const std::vector<Invariant<FailoverWorld>>& failover_invariants();

}  // namespace railcheck::verify
