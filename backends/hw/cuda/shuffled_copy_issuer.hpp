#pragma once
// A WriteIssuer test double: copies src+local_offset (or an inline descriptor's bytes) to
// dst+remote_offset with memcpy when the write is posted, and reports the landings in a seeded
// random order, a few at a time, the way writes sharded over several NICs or sent over SRD land.
// Named as a double: no NIC is involved.
#include <cstdint>
#include <random>
#include <vector>

#include "backends/hw/cuda/write_issuer.hpp"

namespace railcheck::hw::cuda {

class ShuffledCopyIssuer final : public WriteIssuer {
 public:
  // `max_hold`: how many landed writes may be held back before one must be reported (1 = in
  // order, no reordering).
  ShuffledCopyIssuer(const std::uint8_t* src, std::uint8_t* dst, std::uint64_t seed, std::size_t max_hold)
      : src_(src), dst_(dst), rng_(seed), max_hold_(max_hold == 0 ? 1 : max_hold) {}
  Result<bool> post(const WriteDescriptor& d) override;
  Result<bool> post_inline(const WriteDescriptor& d, std::span<const std::uint8_t> bytes) override;
  Result<bool> poll(std::vector<std::uint32_t>& landed_imms) override;
  const char* name() const override { return "in-process copy (test double, no NIC)"; }

 private:
  const std::uint8_t* src_;
  std::uint8_t* dst_;
  std::mt19937_64 rng_;
  std::size_t max_hold_;
  std::vector<std::uint32_t> held_;
};

}  // namespace railcheck::hw::cuda
