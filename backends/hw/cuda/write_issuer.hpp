#pragma once
// How the proxy turns a descriptor into a one-sided WRITE with immediate, and learns which
// immediates landed at the receiver. Implementations: the libfabric backend (fi_writedata with
// FI_REMOTE_CQ_DATA; the receiver's CQ reports the immediate: FabricWriteIssuer), and, for tests
// and for a GPU machine without a NIC, ShuffledCopyIssuer (a test double named as one).
#include <cstdint>
#include <span>
#include <vector>

#include "backends/hw/cuda/descriptor_ring.hpp"
#include "engine/core/result.hpp"

namespace railcheck::hw::cuda {

class WriteIssuer {
 public:
  virtual ~WriteIssuer() = default;
  // Starts the write; the data and immediate land later, in any order (SRD, several rails).
  virtual Result<bool> post(const WriteDescriptor& d) = 0;
  // The same for an inline descriptor (d.inline_payload): `bytes` (d.length of them, at most
  // SlotCodec::kInlineMax) are the payload the proxy copied out of the ring, valid only during the
  // call. The issuer is done with them when it returns: it copies them into staging memory that
  // stays untouched until the provider has finished the write, or hands them to a call that copies
  // them before returning (fi_inject_writedata).
  virtual Result<bool> post_inline(const WriteDescriptor& d, std::span<const std::uint8_t> bytes) = 0;
  // Appends the immediates of writes that landed since the last call; an error when a write
  // failed (the proxy stops: a lost write would leave its flag down forever).
  virtual Result<bool> poll(std::vector<std::uint32_t>& landed_imms) = 0;
  virtual const char* name() const = 0;
};

}  // namespace railcheck::hw::cuda
