#pragma once
// One side of an HA connection over N libfabric rails (docs/hardware.md). It owns the engine's
// HaConnection, one FabricRail per path (an FI_EP_RDM endpoint on its own domain), the timers
// the engine arms (steady_clock, read only here, turned into the engine's "now") and the table
// of user requests. It executes the engine's actions as libfabric calls and turns completions,
// expired timers and arrived control messages back into events; no protocol logic lives here.
//
// Threading: not thread-safe. One caller at a time (the NCCL plugin holds its comm's mutex).
// Nothing blocks: listen/connect return at once, the handshake advances inside progress().
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/auth/job_key.hpp"
#include "engine/core/ids.hpp"
#include "engine/core/result.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck {

struct FabricOptions {
  std::string provider = "tcp;ofi_rxm";  // fi_getinfo prov_name: "tcp;ofi_rxm", "shm", "efa"
  std::uint32_t rails = 2;               // paths of the HA connection; rail 0 is the primary
  // Per rail bind address ("127.0.0.1", "169.254.1.1" for the netns test); empty or a missing
  // entry = the provider's default. Ignored by shm, whose addresses are names.
  std::vector<std::string> rail_addresses;
  // Delivery acks (rc_completion_order.hpp): a send succeeds only once the receiver's backend
  // acknowledged the message, as an RC ACK. Unset: on where the provider's send completion is
  // local (ofi_rxm). Both sides must agree: a sender waiting for acks that never come fails
  // over on its soft RTO.
  std::optional<bool> delivery_acks;
  // Staged sends (staged_sends.hpp): with delivery acks, a send of at most staged_send_bytes
  // completes on the provider's local completion, from a copy the connection keeps for replay
  // until the receiver acknowledges it; at most staged_send_slots such copies at once (more wait
  // for their ack, as without staging). 0 in either: off.
  std::size_t staged_send_bytes = 0;
  std::uint32_t staged_send_slots = 0;
  HaTunables tunables;
  // The job key (issue 46, docs/security.md): every control message between the two ends
  // carries a MAC bound to this connection's handle, its sender and a counter; a forged,
  // altered, replayed or other connection's message is refused, counted and dropped. Both ends
  // must hold the same key; unset on both: no MAC (the plugin allows that only when told to).
  std::optional<auth::JobKey> key;
};

// A user buffer registered on every rail's domain (the engine registers lazily per PD; the
// backend resolves the MrId to the descriptor of whichever rail a WR goes out on).
struct MemoryRegion;

struct RequestResult {
  bool ok = false;
  std::vector<std::size_t> sizes;  // bytes received per buffer (one entry for a send)
  std::string error;               // set when !ok
};

struct RailStats {
  std::uint64_t posted_sends = 0;
  std::uint64_t posted_recvs = 0;
  std::uint64_t posted_writes = 0;
  std::uint64_t control_sent = 0;
  std::uint64_t completions = 0;
  std::uint64_t flushed = 0;          // WRs reported as WR_FLUSH_ERR when the path went to ERR
  std::uint64_t eagain = 0;           // posts that returned -FI_EAGAIN and waited in the pending queue
  std::uint64_t probes_sent = 0;      // rail-liveness probes (tcp_rail_probe.hpp)
  std::uint64_t probes_answered = 0;  // ... answered by the peer's kernel
  bool cut = false;                   // cut_rail() silenced the endpoint (a dead link)
  bool ready = false;                 // the engine's path health is Ready (phase 2 done for a standby)
};

// The initiator's local completion of one write_imm (the id write_imm returned).
struct WriteCompletion {
  std::uint64_t id = 0;
  bool ok = false;
  std::string error;  // set when !ok
};

struct ConnectionStats {
  std::uint64_t progress_calls = 0;  // progress() runs, those inside test() included
  std::uint64_t staged_early = 0;    // sends reported done on their local completion (staged_sends.hpp)
  std::uint32_t failovers = 0;          // switches to a standby (the engine's epoch)
  std::uint32_t failovers_started = 0;  // failover sequences begun, one that found no standby left included (the sim's count)
  std::uint64_t replayed = 0;  // WRs re-posted on a new path (TraceKind::Replayed counts)
  std::uint32_t active_rail = 0;
  // The first failover this side started (steady_clock, comparable across processes on one
  // host) and its trigger as the engine traced it ("rail liveness: ...", "soft RTO: ...").
  std::optional<std::chrono::steady_clock::time_point> first_failover_at;
  std::string first_failover_why;
  bool liveness = false;  // the rail-liveness detector runs (sender, and the peer can be probed)
  std::uint64_t control_refused = 0;  // control messages whose MAC did not verify (issue 46)
  std::string first_control_refusal;  // the first one's reason and rail, for one log line
  std::vector<RailStats> rails;
};

class FabricConnection {
 public:
  // Receiver: opens the rails and writes the engine's handle (<= kHandleMaxSize bytes) into
  // handle_out. The peer's address comes later, in its ConnectRequest.
  static Result<std::unique_ptr<FabricConnection>> listen(const FabricOptions& options,
                                                          std::vector<std::uint8_t>& handle_out);
  // Sender: opens the rails, decodes the handle and starts phase 1. Never blocks.
  static Result<std::unique_ptr<FabricConnection>> connect(const FabricOptions& options,
                                                           std::span<const std::uint8_t> handle);

  ~FabricConnection();
  FabricConnection(const FabricConnection&) = delete;
  FabricConnection& operator=(const FabricConnection&) = delete;

  // Non-blocking: reads every rail's CQ in batches, fires due timers, retries the pending
  // queue, decodes arrived control messages, and feeds the engine.
  void progress();
  bool ready() const;   // HaConnection::comm_ready(): NCCL hands out the comm only then
  bool failed() const;  // no usable rail left (or the handshake broke)

  Result<MemoryRegion*> register_memory(void* addr, std::size_t len);
  Result<bool> deregister_memory(MemoryRegion* mr);

  Result<RequestId> isend(const void* data, std::size_t size, std::uint64_t tag, MemoryRegion* mr);
  // A grouped receive: data[i] (sizes[i] bytes) receives the message tagged tags[i].
  Result<RequestId> irecv(std::span<void* const> data, std::span<const std::size_t> sizes,
                          std::span<const std::uint64_t> tags, std::span<MemoryRegion* const> mrs);
  // The request's result once it finished (the request is forgotten then); progresses only when
  // no earlier call finished it.
  std::optional<RequestResult> test(RequestId request);
  // The request's result if an earlier call already finished it (forgotten then); never
  // progresses. For a caller that runs one progress() of its own per poll of many requests (the
  // NCCL plugin's test(): a progress per lookup made it three per call, issue 42).
  std::optional<RequestResult> finished(RequestId request);

  // One-sided WRITE with immediate (fi_writedata) of `size` bytes from `data` (inside `mr`) to
  // the peer's registered memory at remote_addr on `rail`, outside the engine: nothing is
  // replayed on failover; the target learns of it through landed_imms(), ImmCounter-style
  // (engine/imm/imm_counter.hpp). Needs the rail's peer (ready() for rail 0, the path's phase 2
  // for a standby). size 0 is allowed and still carries `imm`. Returns the write's id.
  Result<std::uint64_t> write_imm(PathIndex rail, const void* data, std::size_t size, MemoryRegion* mr,
                                  std::uint64_t remote_addr, std::uint64_t remote_key, std::uint32_t imm);
  // Initiator: progress, then append (and forget) the local completions of write_imm calls.
  void completed_writes(std::vector<WriteCompletion>& out);
  // Target: progress, then append (and forget) the immediates of writes that landed here, in the
  // order this side's CQs reported them (FI_REMOTE_CQ_DATA entries without a local operation).
  void landed_imms(std::vector<std::uint32_t>& out);
  // What a peer needs to write into `mr` on `rail` (registered there now if the engine has not
  // yet): the key, and the address of byte `offset` (the VA with FI_MR_VIRT_ADDR, else offset).
  Result<std::uint64_t> remote_key(MemoryRegion* mr, PathIndex rail);
  Result<std::uint64_t> remote_address(MemoryRegion* mr, PathIndex rail, std::size_t offset);
  // The rail has its peer's address (a write_imm on it can go out).
  bool rail_connected(PathIndex rail) const;

  // Fault injection: the rail's link dies mid-stream. Outstanding WRs on it complete as errors,
  // as they would on an RC QP whose link died, and the engine fails over. The endpoint is
  // silenced (never posted to or polled again) and closed with the connection, so its peer sees
  // a dead link, not a closed connection; fabric_executor.cpp says why.
  void cut_rail(PathIndex rail);

  ConnectionStats stats() const;
  // Failovers completed so far: stats().failovers without building the per-rail table (the NCCL
  // plugin asks after every progress call).
  std::uint32_t failovers() const;
  // Control messages refused so far (stats().control_refused, without building the stats).
  std::uint64_t control_refused() const;
  // Staged sends reported done whose delivery is not yet acknowledged: the connection still owes
  // them progress (a replay if their rail dies) though the user may never call test() again.
  std::size_t unacknowledged_sends() const;
  // A receiver holding deliveries it has not acknowledged yet (acks go out lazily:
  // delivery_ack_clock.hpp): it owes its peer a progress call though the user may not call.
  bool owes_delivery_ack() const;
  const std::string& provider() const;

 private:
  struct State;
  static Result<std::unique_ptr<State>> open_state(const FabricOptions& options, bool sender,
                                                   bool peer_advertises_probes);
  explicit FabricConnection(std::unique_ptr<State> state);
  // A copy of a send for staging (staged_sends.hpp), its arena registered on first use; nullopt
  // when the send goes out from the user's buffer.
  std::optional<const std::byte*> stage(RequestId id, const void* data, std::size_t size);
  std::unique_ptr<State> s_;
};

}  // namespace railcheck
