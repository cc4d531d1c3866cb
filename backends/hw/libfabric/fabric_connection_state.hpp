#pragma once
// PRIVATE to backends/hw/libfabric: what a FabricConnection holds. Its methods live by job in
// fabric_executor.cpp (the action executor), fabric_connection.cpp (construction, the user's
// two-sided calls), fabric_write_imm.cpp (the one-sided write API) and fabric_rail_probes.cpp
// (the rail-liveness probes, ProbeRail).
#include <rdma/fabric.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/hw/libfabric/coarse_clock.hpp"
#include "backends/hw/libfabric/context_slab.hpp"
#include "backends/hw/libfabric/control_codec.hpp"
#include "backends/hw/libfabric/delivery_ack_clock.hpp"
#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/libfabric/fabric_rail.hpp"
#include "backends/hw/libfabric/pending_queue.hpp"
#include "backends/hw/libfabric/rc_completion_order.hpp"
#include "backends/hw/libfabric/staged_sends.hpp"
#include "backends/hw/libfabric/tcp_rail_probe.hpp"
#include "engine/auth/sealed_channel.hpp"
#include "engine/failover/ha_connection.hpp"

namespace railcheck {

namespace fabric {

enum class OpKind : std::uint8_t { Data, ControlSend, ControlRecv };

// The context of every operation handed to libfabric. It starts with the fi_context2 the
// provider may use (FI_CONTEXT2 mode), so its address is what the CQ entry gives back.
struct Op {
  fi_context2 fi{};
  OpKind kind = OpKind::Data;
  std::uint32_t rail = 0;
  std::uint64_t generation = 0;  // the rail's generation when posted
  bool posted = false;           // the provider holds it (a completion will come)
  bool stale = false;            // reported already (flushed); its completion is dropped
  WrId wr{};
  WrOpcode opcode = WrOpcode::Send;
  std::uint64_t addr = 0;  // a data WR's buffer (a staged send's copy: StagedSends::sent_locally)
  std::uint32_t length = 0;
  std::vector<std::uint8_t> bytes;  // control message buffer
  bool in_use = false;              // ContextSlab's
};

// A write_imm the provider holds: outside the engine, so outside Op and `outstanding`.
struct WriteOp {
  fi_context2 fi{};  // first: the CQ entry's op_context is this address (FI_CONTEXT2 mode)
  std::uint64_t id = 0;
  std::uint32_t rail = 0;
  bool posted = false;  // the provider took it (counted in RailSlot::writes_posted)
  bool in_use = false;  // ContextSlab's
};

}  // namespace fabric

using fabric::ContextSlab;
using fabric::FabricRail;
using fabric::Op;
using fabric::OpKind;
using fabric::PendingQueue;
using fabric::RailCompletion;
using fabric::RailMemory;
using fabric::RcCompletionOrder;
using fabric::WriteOp;

struct MemoryRegion {
  MrId id{};
  void* addr = nullptr;
  std::size_t len = 0;
  std::vector<std::optional<RailMemory>> per_rail;  // registered lazily, when the engine asks
};

struct RailSlot {
  std::unique_ptr<FabricRail> rail;
  PendingQueue pending;
  std::uint64_t generation = 0;
  bool err = false;                 // the engine moved this path to ERR
  bool cut = false;                 // the endpoint is silenced: never posted to or polled (cut_rail)
  std::map<WrId, Op*> outstanding;  // data WRs the provider may still complete, by id
  // What the engine hears, and when: RC's completion order (rc_completion_order.hpp).
  RcCompletionOrder order;
  RailStats stats;
  std::size_t writes_in_flight = 0;  // write_imm calls not yet complete (queued ones included)
  // Room for writes, learned from the provider (poll_rails): how many it held when it last
  // refused one with -FI_EAGAIN; SIZE_MAX once a retry emptied the queue.
  std::size_t writes_posted = 0;  // write_imm calls the provider took and has not completed
  std::size_t write_room = SIZE_MAX;
  std::uint32_t gated_retries = 0;  // retries held back (no room) since the last one
  std::uint32_t room_fills = 0;     // retries bounded by the room since the last probe beyond it
  // Polling a rail with nothing in flight (nothing in `order`: no WR in the provider, no send
  // waiting for its delivery ack) and nothing in its last poll is an empty CQ read; such a rail
  // is polled every kIdlePollEvery progress() calls, and at least once per tick of the coarse
  // clock (poll_rails).
  bool hot = true;
  std::uint32_t idle_polls_skipped = 0;
  Nanos last_idle_poll{0};  // coarse clock
  // A peer holds a key to memory on this rail (remote_key was asked for it): remote writes may
  // be streaming in at any time, and on manual-progress providers (tcp;ofi_rxm, shm) the target's
  // CQ read is what moves their bytes, so this rail is never skipped as idle. Skipping it cut
  // tcp;ofi_rxm's 4 MiB write bandwidth to 0.61x the plain loop (issue 32).
  bool writable_by_peer = false;
};

struct FabricConnection::State {
  FabricOptions options;
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  fabric::CoarseClock coarse{epoch};  // progress()'s "is anything due?" clock
  // Before the rails and MRs: the copies outlive the registrations of their arena.
  fabric::StagedSends staged{0, 0};
  MemoryRegion* staged_mr = nullptr;  // the arena, registered on the first staged send
  bool staging_off = false;           // registering the arena failed: send from the user's buffers
  std::uint64_t staged_early = 0;     // ConnectionStats
  // A send the user heard "done" for on its local completion, then failed (the connection
  // broke before the receiver acknowledged it): failed() from then on.
  bool staged_send_lost = false;
  // MRs before rails: they are closed before the domains they live on.
  std::vector<RailSlot> rails;
  std::unordered_map<const MemoryRegion*, std::unique_ptr<MemoryRegion>> mrs;
  std::map<MrId, MemoryRegion*> mr_by_id;
  ContextSlab<Op> ops;
  ContextSlab<WriteOp> writes;  // write_imm in flight
  std::vector<WriteCompletion> write_done;
  std::vector<std::uint32_t> landed_imms;
  std::uint64_t next_write = 0;
  std::unique_ptr<HaConnection> engine;
  std::map<TimerId, Nanos> timers;
  // No timer is due before this (a cancelled timer may leave it early: fire_timers looks again).
  Nanos next_deadline{0};
  std::map<RequestId, RequestResult> results;
  // Events the driver owes the engine (completions RC order let through, flushes, failed
  // posts), handed over by drain() in order. A vector that drain() empties with clear(), and one
  // Actions buffer for every event: both keep their capacity, so a small message costs no heap
  // block here (a deque allocates and frees a block every few events; issue 32).
  std::vector<Event> deferred;
  Actions actions;
  std::vector<RailCompletion> batch;
  std::uint64_t next_request = 0;
  std::uint64_t next_mr = 0;
  std::uint64_t replayed = 0;
  std::uint32_t failovers_started = 0;  // TraceKind::FailoverStarted seen
  std::uint64_t progress_calls = 0;  // ConnectionStats
  bool feeding = false;
  // RAILCHECK_FABRIC_TRACE=1 prints the engine's trace notes (failovers, replays) to stderr.
  bool trace_to_stderr = std::getenv("RAILCHECK_FABRIC_TRACE") != nullptr;
  bool handshake_failed = false;
  std::optional<Error> registration_error;
  // Delivery acks (rc_completion_order.hpp, point 3): the sender holds each send's success
  // until the receiver's backend acknowledges the message; the receiver acknowledges its
  // engine's delivered watermark when `ack_clock` says one is due (delivery_ack_clock.hpp).
  // `ack_sent`: the last watermark sent.
  bool delivery_acks = false;
  std::uint64_t ack_sent = 0;
  fabric::DeliveryAckClock ack_clock;
  std::vector<CompletionEvent> released;  // scratch for RcCompletionOrder
  // Kernel-answered rail-liveness probes (tcp_rail_probe.hpp); null where the rails are not TCP.
  std::unique_ptr<fabric::TcpRailProbes> probes;
  std::vector<fabric::ProbeAnswer> probe_answers;  // scratch for poll_probes
  std::uint32_t probe_polls = 0;                   // poll_probes calls (when a receiver drains its listeners)
  // The first FailoverStarted the engine traced: when, and its trigger (ConnectionStats).
  std::optional<std::chrono::steady_clock::time_point> first_failover_at;
  std::string first_failover_why;
  // With a job key: seals every control message sent and opens every one received
  // (engine/auth/sealed_channel.hpp). Refusals are counted; the first is kept for the log.
  std::optional<auth::SealedChannel> seal;
  std::uint64_t control_refused = 0;
  std::string first_control_refusal;

  ~State();

  Nanos now() const;

  // With a key: both ends bind their MAC to the listener's handle (what both hold of this one
  // connection); the connecting side is party 0, the listener party 1.
  void start_sealing(std::span<const std::uint8_t> handle, bool connecting);

  // ---- engine I/O ----
  // An event from outside the engine (a user call, a control message, a timer): handed straight
  // to the engine when nothing is owed before it, else queued behind what is.
  void feed(const Event& ev);
  // Hands the engine every event the driver owes it, in order. Never re-entered: an action that
  // produces an event (a flush, a refused post) queues it behind the batch being executed.
  void drain();
  // One event through the engine and its actions executed, in `actions`; only while `feeding`.
  void handle_one(const Event& ev);

  void execute(Actions& actions);

  // ---- posting ----
  Op* new_op(OpKind kind, std::uint32_t rail);
  void drop_op(Op* op);

  void owe_completion(PathIndex path, const WorkRequest& wr, WcStatus st);

  void post_data(PathIndex path, const WorkRequest& wr, std::optional<std::pair<std::uint64_t, std::uint32_t>> rma);

  // A control receive on rail r: a new op with a kControlMaxBytes buffer, or `reuse`, a control
  // receive that just completed, posted again with its buffer.
  void post_control_recv(std::uint32_t r, Op* reuse = nullptr);

  void send_control(const ControlChannel& ch, const ControlMessage& m);

  void send_control_bytes(std::uint32_t r, std::vector<std::uint8_t> bytes, bool oob);

  // ---- QP state ----
  void modify(const ModifyQp& m);

  // ERR: every WR outstanding on the path completes with WR_FLUSH_ERR, in posting order.
  void flush(PathIndex path);

  void register_on_rail(const RegisterMr& r);

  // ---- completions ----
  void on_completion(std::uint32_t r, const RailCompletion& c);

  // Queues for the engine every completion of the rail that RC order lets through now.
  void release(RailSlot& slot);

  // ERR or a cut: what RC order lets through as it is, then flushes (RcCompletionOrder::fail).
  void flush_in_order(RailSlot& slot, PathIndex path, WcStatus first_status);

  // Sender: the receiver's engine holds every message below `next`; sends it covers complete.
  void on_delivery_ack(const fabric::DeliveryAck& a);

  // Receiver: acknowledge the delivered watermark, on the path the engine uses, once an ack is
  // due (ack_clock).
  void acknowledge_delivery();

  // write_imm's CQ entries, which the engine never hears of: the initiator's completion of a
  // WriteOp, and at the target a remote write's immediate (FI_REMOTE_CQ_DATA with no operation
  // of ours behind it; a receive's immediate comes with its Op). True when consumed.
  // (fabric_write_imm.cpp)
  bool on_write_event(const RailCompletion& c);
  // A write is over (completed, failed or injected): its rail's count and its slab slot.
  void finish_write(WriteOp* w);

  // The rail's registration of `mr`, made now if the engine has not asked for it yet.
  // (fabric_write_imm.cpp)
  Result<const RailMemory*> rail_memory(MemoryRegion* mr, PathIndex path);

  // ---- polling and timers ----
  void poll_rails(Nanos coarse_now);
  void retry_pending(RailSlot& slot);  // bounded by the room learned from refusals

  void fire_timers(Nanos coarse_now);

  // ---- rail-liveness probes (fabric_rail_probes.cpp) ----
  // Before the engine exists: the receiver listens for probes on every rail and advertises the
  // ports in its endpoints; the sender keeps the detector on only if the peer advertised one.
  void open_probes(HaConnectionConfig& cfg, bool sender, bool peer_advertises_probes);
  // ModifyQp RTR on a sender's path: the peer's endpoint names the probe port of that rail.
  void learn_probe_peer(PathIndex path, const QpEndpoint& remote);
  void probe(const ProbeRail& p);
  // Answers that arrived become ProbeAnswered events.
  void poll_probes();

  // A sender's standby just became ready: make the provider connect it now, not during a
  // failover (fabric_standby_warmup.cpp).
  void warm_standby(PathIndex path);

  // ---- fault injection ----
  void cut(PathIndex path);
};

}  // namespace railcheck
