#pragma once
// The invariants of the LL fast-path world (ll_world.hpp says what each one holds).
#include <vector>

#include "verify/invariant.hpp"
#include "verify/zerobuf/ll_world.hpp"

namespace railcheck::verify::zerobuf {

const std::vector<Invariant<LlWorld>>& ll_invariants();

}  // namespace railcheck::verify::zerobuf
