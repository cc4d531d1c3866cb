#pragma once
// One rail: an FI_EP_RDM endpoint on its own fabric, domain, address vector and completion
// queue, so N rails are N independent NICs (or N namespaced links) as the HA connection
// expects. The rail knows nothing of the engine: it posts, polls and registers; the
// connection decides what each operation means (fabric_executor.cpp).
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/hw/libfabric/fid_handle.hpp"
#include "engine/core/qp_endpoint.hpp"
#include "engine/core/result.hpp"

namespace railcheck::fabric {

// The tag every control message carries (fi_tsend/fi_trecv); data travels untagged (FI_MSG),
// so the two never match each other's receives.
constexpr std::uint64_t kControlTag = 0x5243'4354'0000'0001ULL;  // "RCCT" ... 1

// shm (libfabric 1.17, seen here): a zero-length send with FI_DELIVERY_COMPLETE never
// completes. On such a provider a zero-length message travels as one byte with this bit set in
// its 64-bit CQ data (the engine's immediate is the low 32 bits), and a zero-length receive
// lands in a private byte; the completion reports 0 bytes. A zero-length message arriving in a
// larger buffer writes that buffer's first byte.
constexpr std::uint64_t kZeroLengthFlag = 1ULL << 32;

// A completion as the connection sees it: the context it posted with, or an error.
struct RailCompletion {
  void* context = nullptr;
  std::uint64_t flags = 0;  // FI_SEND, FI_RECV, FI_REMOTE_CQ_DATA, FI_REMOTE_WRITE, ...
  std::size_t len = 0;
  std::uint64_t data = 0;  // remote CQ data when flags has FI_REMOTE_CQ_DATA
  int error = 0;           // positive fi_errno when the operation failed (fi_cq_readerr)
  // fi_cq_strerror's provider-specific text ("" when none): owned by the rail, valid until its
  // next poll. Not a std::string: a completion is copied per CQ entry on the data path (issue 32).
  const char* error_text = "";
};

struct RailMemory {
  FidHandle<fid_mr> mr;
  void* desc = nullptr;    // fi_mr_desc: passed with every local buffer (FI_MR_LOCAL)
  std::uint64_t key = 0;   // fi_mr_key: what a peer writes with
  std::uint64_t base = 0;  // remote address of byte 0: the VA with FI_MR_VIRT_ADDR, else 0
};

// When the provider reports a send done (the endpoint's default tx op flags; provider_query.hpp
// local_send_completion_pays says which one a connection asks for).
enum class SendCompletion : std::uint8_t {
  Delivered,  // FI_DELIVERY_COMPLETE: once the peer placed it (an RC ACK)
  Local,      // FI_INJECT_COMPLETE: once the bytes left (the backend's own acks say delivered)
};

class FabricRail {
 public:
  // `node`: bind address (tcp: IPv4; empty = provider default). For shm a short unique name is
  // generated so the address fits the handle (endpoint_address.hpp).
  static Result<std::unique_ptr<FabricRail>> open(const std::string& provider, const std::string& node,
                                                  std::size_t cq_depth,
                                                  SendCompletion completion = SendCompletion::Delivered);
  ~FabricRail();
  FabricRail(const FabricRail&) = delete;
  FabricRail& operator=(const FabricRail&) = delete;

  const std::string& provider() const { return provider_; }
  const QpEndpoint& local() const { return local_; }
  bool has_peer() const { return peer_.has_value(); }
  bool virt_addr() const { return (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0; }
  std::size_t inject_size() const { return info_->tx_attr->inject_size; }

  // fi_av_insert of the peer's address (the engine's RTR). Inserting the same address again is
  // a no-op; a different one replaces the peer.
  Result<bool> insert_peer(const QpEndpoint& remote);

  // Each returns what the fi_* call returned: 0, -FI_EAGAIN, or another negative fi_errno.
  ssize_t send(const void* buf, std::size_t len, void* desc, std::optional<std::uint32_t> imm, void* ctx);
  ssize_t recv(void* buf, std::size_t len, void* desc, void* ctx);
  ssize_t tsend(const void* buf, std::size_t len, void* desc, void* ctx);
  ssize_t trecv(void* buf, std::size_t len, void* desc, void* ctx);
  ssize_t write(const void* buf, std::size_t len, void* desc, std::optional<std::uint32_t> imm,
                std::uint64_t remote_addr, std::uint64_t key, void* ctx);
  // fi_inject_writedata of len <= inject_size() bytes: the provider has copied `buf` when this
  // returns, and no local completion is generated (the caller completes the write at once). Used
  // for zero-length writes on shm, where a zero-length write with FI_DELIVERY_COMPLETE, like a
  // zero-length send, never completes (seen here, 1.17; buf may then be null), and for the CUDA
  // host proxy's inline writes (backends/hw/cuda/fabric_write_issuer.hpp).
  ssize_t inject_write(const void* buf, std::size_t len, std::uint32_t imm, std::uint64_t remote_addr,
                       std::uint64_t key);
  bool zero_length_write_injected() const { return zero_length_as_byte_; }
  // fi_cancel of a posted receive (the engine moved this path to ERR).
  void cancel(void* ctx);

  // Reads up to out.size() completions (one fi_cq_read batch), or one error entry.
  Result<std::size_t> poll(std::span<RailCompletion> out);

  Result<RailMemory> register_memory(void* addr, std::size_t len);

 private:
  FabricRail() = default;
  Error fail(const char* call, long rc) const;

  std::string provider_;
  InfoHandle info_;
  FidHandle<fid_fabric> fabric_;
  FidHandle<fid_domain> domain_;
  FidHandle<fid_cq> cq_;
  FidHandle<fid_av> av_;
  FidHandle<fid_ep> ep_;
  QpEndpoint local_;
  std::optional<QpEndpoint> peer_;
  fi_addr_t peer_addr_ = FI_ADDR_UNSPEC;
  std::uint64_t next_key_ = 1;
  bool zero_length_as_byte_ = false;
  std::uint8_t zero_length_landing_ = 0;
  std::vector<fi_cq_data_entry> batch_;
  std::array<char, 256> error_text_{};  // the last error completion's text (RailCompletion)
};

}  // namespace railcheck::fabric
