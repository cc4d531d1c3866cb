#pragma once
// A WriteIssuer over libfabric: each descriptor becomes one fi_writedata (FabricRail::write with
// the descriptor's imm as remote CQ data) from an initiator rail into a target rail's registered
// buffer; the target rail's completions carrying FI_REMOTE_CQ_DATA are the landings. Both rails
// live in this process (loopback: tcp;ofi_rxm on 127.0.0.1, or shm), so the proxy can be tested
// against a real provider without a NIC; on a NIC the target rail is the peer's.
//
// No posted receive at the target: providers are chosen without FI_RX_CQ_DATA in their mode
// (provider_query.cpp asks only FI_CONTEXT | FI_CONTEXT2), so remote CQ data on an RMA write
// does not consume a receive buffer (man fi_getinfo, FI_RX_CQ_DATA).
// Single-threaded like FabricRail: post and poll run on the proxy thread.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <rdma/fabric.h>

#include "backends/hw/cuda/write_issuer.hpp"
#include "backends/hw/libfabric/fabric_rail.hpp"

namespace railcheck::hw::cuda {

class FabricWriteIssuer final : public WriteIssuer {
 public:
  // Opens both rails, makes them each other's peer, registers src (initiator) and dst (target).
  static Result<std::unique_ptr<FabricWriteIssuer>> open(const std::string& provider, const std::string& node,
                                                         const std::uint8_t* src, std::size_t src_len,
                                                         std::uint8_t* dst, std::size_t dst_len);
  Result<bool> post(const WriteDescriptor& d) override;
  Result<bool> poll(std::vector<std::uint32_t>& landed_imms) override;
  const char* name() const override { return name_.c_str(); }

  std::uint64_t local_completions() const { return local_completions_; }
  std::uint64_t eagain_retries() const { return eagain_retries_; }

 private:
  FabricWriteIssuer() = default;
  // FI_CONTEXT2 mode: the provider owns this storage until the write's local completion.
  struct Op {
    fi_context2 ctx{};
  };
  Op* take_op();
  Result<bool> drain(std::vector<std::uint32_t>* landed);

  std::string name_;
  std::unique_ptr<fabric::FabricRail> initiator_;
  std::unique_ptr<fabric::FabricRail> target_;
  fabric::RailMemory src_mem_;
  fabric::RailMemory dst_mem_;
  const std::uint8_t* src_ = nullptr;
  std::size_t src_len_ = 0;
  std::size_t dst_len_ = 0;
  std::vector<std::unique_ptr<Op>> ops_;  // every Op ever made (stable addresses)
  std::vector<Op*> free_ops_;
  std::vector<std::uint32_t> pending_;  // landings seen while post() waited out -FI_EAGAIN
  std::vector<fabric::RailCompletion> batch_ = std::vector<fabric::RailCompletion>(64);
  std::uint64_t local_completions_ = 0;
  std::uint64_t eagain_retries_ = 0;
};

}  // namespace railcheck::hw::cuda
