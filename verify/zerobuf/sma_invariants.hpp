#pragma once
// The invariants of the SMA world (sma_world.hpp says what each one holds).
#include <vector>

#include "verify/invariant.hpp"
#include "verify/zerobuf/sma_world.hpp"

namespace railcheck::verify::zerobuf {

const std::vector<Invariant<SmaWorld>>& sma_invariants();

}  // namespace railcheck::verify::zerobuf
