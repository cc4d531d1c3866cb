#pragma once
// A WriteIssuer over libfabric: each descriptor becomes one fi_writedata (FabricRail::write with
// the descriptor's imm as remote CQ data) from an initiator rail into a target rail's registered
// buffer; the target rail's completions carrying FI_REMOTE_CQ_DATA are the landings. Both rails
// live in this process (loopback: tcp;ofi_rxm on 127.0.0.1, or shm), so the proxy can be tested
// against a real provider without a NIC; on a NIC the target rail is the peer's.
//
// Inline descriptors (descriptor_ring.hpp): bytes of at most the initiator's inject size go out with
// fi_inject_writedata, which has copied them when it returns (no local completion, nothing to keep);
// the rest (or all, with InlineWrites::Staged) are copied into the staging buffer of the write's
// operation context, a slice of one region registered on the initiator, and written from there.
// A context and its slice return to the free list only when the initiator's CQ reports that
// write complete, so the provider never reads a staging buffer that a later write refilled.
//
// No posted receive at the target: providers are chosen without FI_RX_CQ_DATA in their mode
// (provider_query.cpp asks only FI_CONTEXT | FI_CONTEXT2), so remote CQ data on an RMA write
// does not consume a receive buffer (man fi_getinfo, FI_RX_CQ_DATA).
// Single-threaded like FabricRail: post and poll run on the proxy thread.
#include <rdma/fabric.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/hw/cuda/write_issuer.hpp"
#include "backends/hw/libfabric/fabric_rail.hpp"

namespace railcheck::hw::cuda {

class FabricWriteIssuer final : public WriteIssuer {
 public:
  // InjectWhereAllowed: inline writes within the provider's inject size are injected, the rest
  // staged. Staged: every inline write staged (the path of a provider without inject; tests).
  enum class InlineWrites { InjectWhereAllowed, Staged };
  // Writes in flight at once (operation contexts, each with a staging buffer): the rails' CQ depth.
  static constexpr std::size_t kMaxInFlight = 256;
  static constexpr std::size_t kStagingBytes = 128;  // >= SlotCodec::kInlineMax, whole cache lines
  static_assert(kStagingBytes >= SlotCodec::kInlineMax);

  // Opens both rails, makes them each other's peer, registers src (initiator) and dst (target).
  static Result<std::unique_ptr<FabricWriteIssuer>> open(const std::string& provider, const std::string& node,
                                                         const std::uint8_t* src, std::size_t src_len,
                                                         std::uint8_t* dst, std::size_t dst_len,
                                                         InlineWrites inline_writes = InlineWrites::InjectWhereAllowed);
  Result<bool> post(const WriteDescriptor& d) override;
  Result<bool> post_inline(const WriteDescriptor& d, std::span<const std::uint8_t> bytes) override;
  Result<bool> poll(std::vector<std::uint32_t>& landed_imms) override;
  const char* name() const override { return name_.c_str(); }

  std::uint64_t local_completions() const { return local_completions_; }
  std::uint64_t eagain_retries() const { return eagain_retries_; }
  std::uint64_t injected() const { return injected_; }  // writes sent with fi_inject_writedata
  std::uint64_t staged() const { return staged_; }      // inline writes sent from a staging buffer
  std::size_t inject_size() const { return initiator_->inject_size(); }

 private:
  FabricWriteIssuer() = default;
  // FI_CONTEXT2 mode: the provider owns this storage, and the staging slice, until the write's
  // local completion (ctx first: the completion's context is the Op).
  struct Op {
    fi_context2 ctx{};
    std::uint8_t* staging = nullptr;  // kStagingBytes inside staging_, registered as staging_mem_
  };
  Result<bool> check_range(const WriteDescriptor& d, std::size_t local_len) const;
  // A free Op, reading completions until one is (the provider gives Ops back only there).
  Result<Op*> take_op(const WriteDescriptor& d);
  // Calls `post` (returning what the fi_* call returned) until it is not -FI_EAGAIN, reading
  // completions between tries; `op` (may be null: an inject) goes back to the free list on failure.
  template <typename Post>
  Result<bool> post_retrying(const WriteDescriptor& d, Op* op, const char* call, Post&& post);
  Result<bool> inject(const WriteDescriptor& d, const void* bytes);
  Result<bool> drain(std::vector<std::uint32_t>* landed);

  std::string name_;
  std::unique_ptr<fabric::FabricRail> initiator_;
  std::unique_ptr<fabric::FabricRail> target_;
  fabric::RailMemory src_mem_;
  fabric::RailMemory dst_mem_;
  fabric::RailMemory staging_mem_;
  const std::uint8_t* src_ = nullptr;
  std::size_t src_len_ = 0;
  std::size_t dst_len_ = 0;
  InlineWrites inline_writes_ = InlineWrites::InjectWhereAllowed;
  std::vector<std::uint8_t> staging_ = std::vector<std::uint8_t>(kMaxInFlight * kStagingBytes);
  std::vector<Op> ops_ = std::vector<Op>(kMaxInFlight);  // never resized: the provider holds their addresses
  std::vector<Op*> free_ops_;
  std::vector<std::uint32_t> pending_;  // landings seen while post() waited out -FI_EAGAIN
  std::vector<fabric::RailCompletion> batch_ = std::vector<fabric::RailCompletion>(64);
  std::uint64_t local_completions_ = 0;
  std::uint64_t eagain_retries_ = 0;
  std::uint64_t injected_ = 0;
  std::uint64_t staged_ = 0;
};

}  // namespace railcheck::hw::cuda
