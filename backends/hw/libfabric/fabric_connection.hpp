#pragma once
// One side of an HA connection (an NCCL sendComm or recvComm) over N libfabric rails. The
// engine's HaConnection runs unchanged inside; this class is its driver on real transports:
// it executes the engine's actions as libfabric calls (fabric_driver.cpp) and turns completions,
// expired timers and arrived control messages back into engine events. No protocol decision is
// made here.
//
//   rail p        one FI_EP_RDM endpoint on its own domain, CQ and AV (fabric_rail.hpp); the
//                 engine's path p. Rail 0 is the primary.
//   data          untagged FI_MSG sends/receives, FI_ORDER_SAS, the engine's seq as remote CQ
//                 data: receives match in posting order, as on an RC QP.
//   control       tagged messages (fi_tsend/fi_trecv, one tag) carrying engine control messages
//                 (engine/core/control_codec.hpp); "out of band" before the primary is up is
//                 rail 0 towards the address in the listener's handle.
//   QP states     RTR = the peer's address inserted in the rail's AV; ERR = the rail is fenced:
//                 its posted receives are cancelled and every WR outstanding on it completes
//                 as WR_FLUSH_ERR, as on an RC QP moved to ERR.
//   WRITE_IMM     fi_writedata with FI_REMOTE_CQ_DATA on a rail (write_imm below); the target
//                 reports the immediate (landed_imms).
//
// Threading: none inside. Every call runs on the caller's thread; progress() (also called by
// test()) drives everything. A connection is used by one thread at a time.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/core/ids.hpp"
#include "engine/core/result.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck::hw::fabric {

struct FabricOptions {
  std::string provider = "tcp;ofi_rxm";  // "tcp;ofi_rxm", "shm", "efa"
  std::uint32_t rails = 2;               // endpoints per connection; rail 0 is the primary
  // Per rail bind address (tcp: an IPv4 address such as "127.0.0.1" or "169.254.1.1"); empty or
  // shorter than `rails`: the provider's default for the missing ones.
  std::vector<std::string> rail_addresses;
  HaTunables tunables;
  std::uint64_t seed = 1;  // PSNs and anything else random come from here
};

class FabricRail;
class FabricDriver;

// A registration of user memory on every rail's domain (lazily per rail, as the engine asks).
class MemoryRegion {
 public:
  void* addr() const { return addr_; }
  std::size_t length() const { return length_; }
  MrId id() const { return id_; }
  // What a peer needs to WRITE into this region through rail `rail` (fi_mr_key; the address is
  // virtual when the provider uses FI_MR_VIRT_ADDR, else an offset). Registers on that rail now
  // if the engine has not yet.
  Result<std::uint64_t> remote_key(PathIndex rail);
  std::uint64_t remote_address(const void* p, PathIndex rail) const;

 private:
  friend class FabricConnection;
  friend class FabricDriver;
  MemoryRegion(FabricDriver& d, MrId id, void* addr, std::size_t len) : driver_(d), id_(id), addr_(addr), length_(len) {}
  FabricDriver& driver_;
  MrId id_;
  void* addr_;
  std::size_t length_;
};

struct RequestResult {
  bool ok = false;
  std::vector<std::size_t> sizes;  // bytes per buffer (one entry for a send)
  std::string error;               // when !ok
};

struct ConnectionStats {
  std::uint32_t failovers = 0;
  std::uint64_t replayed = 0;  // WRs re-posted on another rail
  std::uint32_t active_rail = 0;
  std::uint64_t progress_calls = 0;
  std::uint64_t eagain_retries = 0;  // posts the provider refused once with -FI_EAGAIN
  std::vector<std::uint64_t> posted_per_rail;
  std::vector<std::uint64_t> completed_per_rail;
};

class FabricConnection {
 public:
  // Receiver (NCCL listen + accept): opens the rails and writes the <= 128-byte handle.
  static Result<std::unique_ptr<FabricConnection>> listen(const FabricOptions& o, std::vector<std::uint8_t>& handle_out);
  // Sender (NCCL connect): decodes the handle and starts phase 1; never blocks.
  static Result<std::unique_ptr<FabricConnection>> connect(const FabricOptions& o, std::span<const std::uint8_t> handle);
  ~FabricConnection();
  FabricConnection(const FabricConnection&) = delete;
  FabricConnection& operator=(const FabricConnection&) = delete;

  // Non-blocking: completion queues in batches, expired timers, posts the provider refused
  // with -FI_EAGAIN, arrived control messages.
  void progress();
  bool ready() const;   // the engine's comm_ready(): NCCL hands out the comm only then
  bool failed() const;  // no usable rail left, or the handshake failed
  std::optional<std::string> failure() const;

  Result<MemoryRegion*> register_memory(void* addr, std::size_t len);
  Result<bool> deregister_memory(MemoryRegion* mr);

  Result<RequestId> isend(const void* data, std::size_t size, std::uint64_t tag, MemoryRegion* mr);
  Result<RequestId> irecv(std::span<void* const> data, std::span<const std::size_t> sizes,
                          std::span<const std::uint64_t> tags, std::span<MemoryRegion* const> mrs);
  // Progresses, then the request's result once it is complete (and forgets it), else nothing.
  std::optional<RequestResult> test(RequestId id);

  // One-sided WRITE with immediate on one rail (no replay: ImmCounter users shard and re-issue
  // themselves, engine/imm). Completes locally through write_completions().
  Result<std::uint64_t> write_imm(PathIndex rail, const void* data, std::size_t size, MemoryRegion* mr,
                                  std::uint64_t remote_addr, std::uint64_t remote_key, std::uint32_t imm);
  // Immediates of writes that landed here since the last call (target side), in arrival order.
  void landed_imms(std::vector<std::uint32_t>& out);
  // Ids returned by write_imm whose local completion arrived (initiator side); failed ones too.
  void write_completions(std::vector<std::pair<std::uint64_t, bool>>& out);

  // Fault injection: the rail's endpoint is torn down now, mid-stream, as if its link died;
  // the engine finds out the way it would on hardware (no completions: soft RTO; or errors).
  void cut_rail(PathIndex rail);

  ConnectionStats stats() const;
  std::uint32_t rails() const;
  const std::string& provider() const;

 private:
  explicit FabricConnection(std::unique_ptr<FabricDriver> d);
  std::unique_ptr<FabricDriver> driver_;
};

}  // namespace railcheck::hw::fabric
