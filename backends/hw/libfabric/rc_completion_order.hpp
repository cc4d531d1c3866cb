#pragma once
// The completion semantics of an RC queue pair, given to a libfabric rail that lacks them. The
// engine is written against RC (docs/hardware.md, "What the engine assumes of a transport"):
//   1. per queue (the send queue: sends and writes; the receive queue), completions come in
//      posting order;
//   2. once a WR fails, the QP is in error: every later completion is a flush;
//   3. a send's success means the peer holds the message (the ACK came back).
// ofi_rxm over tcp keeps none of them: it completes a rendezvous message (> 16 KiB) after later
// eager ones, can still complete an eager message after an earlier one failed, and completes an
// eager send as soon as its bytes are in the local socket. One RcCompletionOrder per rail holds
// what the provider reports and hands it over as an RC CQ would. For (3) the backend counts on
// the peer's delivery acknowledgements (FabricConnection, "delivery acks"): a send posted with
// an ack sequence number succeeds only once the peer acknowledged that message.
//
// Pure bookkeeping, no libfabric: tests/backends/hw/libfabric/rc_completion_order_test.cpp.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "engine/core/event.hpp"
#include "engine/core/work_request.hpp"
#include "engine/core/ids.hpp"

namespace railcheck::fabric {

class RcCompletionOrder {
 public:
  // A WR went to the provider; it is outstanding until landed() (or fail()/forget()). With
  // `ack_seq`, a success stays held until acknowledged() covers that sequence number.
  void posted(WrId wr, WrOpcode opcode, std::optional<std::uint32_t> ack_seq = std::nullopt);
  // The provider completed a WR posted here (unknown WRs are ignored: they were flushed).
  void landed(const CompletionEvent& ev);
  // The peer holds every message whose sequence number is below `next` (32-bit serial
  // arithmetic, as the immediates on the wire). Acknowledgements only move forward.
  void acknowledged(std::uint64_t next);
  // A post the provider refused outright: the caller reports it; the order forgets it.
  void forget(WrId wr);

  // Appends every completion now due, in RC order: per queue, the landed prefix (sends only
  // once acknowledged); after the first error, flushes.
  void release(std::vector<CompletionEvent>& out);
  // The QP goes to ERR (or its link is cut). Per queue, the prefix that release() would hand
  // over goes first, as it is: an RC CQ holds those completions before any flush, and a
  // delivered receive must not be lost. Every other WR flushes in posting order: outstanding
  // ones, those landed behind a hole (the engine would see a sequence gap; the sender was
  // never acknowledged for them), and sends still waiting for their acknowledgement (the peer
  // may not have them; the engine replays them beyond the peer's watermark). The first flush
  // carries `first_status` (RETRY_EXC_ERR for a cut link, as the HCA reports). Empties the order.
  void fail(PathIndex path, WcStatus first_status, std::vector<CompletionEvent>& out);

  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  // Sends held only for their acknowledgement (for stats and tests).
  std::size_t awaiting_ack() const;

 private:
  struct Entry {
    WrOpcode opcode = WrOpcode::Send;
    std::optional<std::uint32_t> ack_seq;
    std::optional<CompletionEvent> landed;
  };
  static int queue_of(WrOpcode op) { return op == WrOpcode::Recv ? 1 : 0; }
  bool acked(std::uint32_t seq) const;
  bool due(const Entry& e) const;

  std::map<WrId, Entry> entries_;  // by WR id = posting order
  std::optional<std::uint32_t> acked_next_;
  bool qp_error_ = false;  // an error was handed over: every later completion is a flush
};

}  // namespace railcheck::fabric
