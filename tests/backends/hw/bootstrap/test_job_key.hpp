#pragma once
// The job key the bootstrap tests run with, and another one for the processes that must be
// refused. Fixed bytes: a test's key need not be secret, only the same on every rank.
#include <cstdint>
#include <vector>

#include "engine/auth/job_key.hpp"

namespace railcheck::hw {

inline auth::JobKey test_job_key(std::uint8_t fill = 0x4a) {
  return auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, fill)).value();
}

}  // namespace railcheck::hw
