#pragma once
// The invariants of the zero-buffer flag world (flag_world.hpp says what each one holds).
#include <vector>

#include "verify/invariant.hpp"
#include "verify/zerobuf/flag_world.hpp"

namespace railcheck::verify::zerobuf {

const std::vector<Invariant<FlagWorld>>& flag_invariants();

}  // namespace railcheck::verify::zerobuf
