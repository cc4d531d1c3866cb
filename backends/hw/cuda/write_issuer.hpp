#pragma once
// How the proxy turns a descriptor into a one-sided WRITE with immediate, and learns which
// immediates landed at the receiver. Implementations: the libfabric backend (fi_writedata with
// FI_REMOTE_CQ_DATA; the receiver's CQ reports the immediate: FabricWriteIssuer), and, for tests
// and for a GPU machine without a NIC, ShuffledCopyIssuer (a test double named as one).
#include <cstdint>
#include <vector>

#include "backends/hw/cuda/descriptor_ring.hpp"
#include "engine/core/result.hpp"

namespace railcheck::hw::cuda {

class WriteIssuer {
 public:
  virtual ~WriteIssuer() = default;
  // Starts the write; the data and immediate land later, in any order (SRD, several rails).
  virtual Result<bool> post(const WriteDescriptor& d) = 0;
  // Appends the immediates of writes that landed since the last call; an error when a write
  // failed (the proxy stops: a lost write would leave its flag down forever).
  virtual Result<bool> poll(std::vector<std::uint32_t>& landed_imms) = 0;
  virtual const char* name() const = 0;
};

}  // namespace railcheck::hw::cuda
