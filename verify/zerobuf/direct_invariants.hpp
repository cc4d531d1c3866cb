#pragma once
// The invariants of the direct fast-path world (direct_world.hpp says what each one holds).
#include <vector>

#include "verify/invariant.hpp"
#include "verify/zerobuf/direct_world.hpp"

namespace railcheck::verify::zerobuf {

const std::vector<Invariant<DirectWorld>>& direct_invariants();

}  // namespace railcheck::verify::zerobuf
