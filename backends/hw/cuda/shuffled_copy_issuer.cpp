#include "backends/hw/cuda/shuffled_copy_issuer.hpp"

#include <cstring>

namespace railcheck::hw::cuda {

Result<bool> ShuffledCopyIssuer::post(const WriteDescriptor& d) {
  if (d.length) std::memcpy(dst_ + d.remote_offset, src_ + d.local_offset, d.length);
  held_.push_back(d.imm);
  return true;
}

Result<bool> ShuffledCopyIssuer::post_inline(const WriteDescriptor& d, std::span<const std::uint8_t> bytes) {
  if (!bytes.empty()) std::memcpy(dst_ + d.remote_offset, bytes.data(), bytes.size());
  held_.push_back(d.imm);
  return true;
}

Result<bool> ShuffledCopyIssuer::poll(std::vector<std::uint32_t>& landed) {
  // Report a random non-empty subset in random order; everything once more than max_hold_ wait.
  while (!held_.empty()) {
    std::size_t pick = std::uniform_int_distribution<std::size_t>(0, held_.size() - 1)(rng_);
    landed.push_back(held_[pick]);
    held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(pick));
    if (held_.size() < max_hold_ && std::uniform_int_distribution<int>(0, 1)(rng_) == 0) break;
  }
  return true;
}

}  // namespace railcheck::hw::cuda
