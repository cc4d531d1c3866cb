#pragma once
// Staged sends: a copy of each small send, kept by the backend until the receiver acknowledges
// the message, so the user's send can complete as soon as its bytes have left (the provider's
// local completion), as a socket send does, while failover can still replay it (issue 42,
// docs/nccl-plugin.md "Completing a send before its ack").
//
// Where the delivery ack waited inside every NCCL step: NCCL chains the ops of one connection,
// so step k+1's isend waits for step k's send to test done. With delivery acks (tcp;ofi_rxm,
// rc_completion_order.hpp point 3) a send is done only once the receiver's ack came back: one
// extra round trip per step that NCCL's Socket transport does not pay. The engine replays a send
// from the buffer its WR names; a staged send's WR names the copy here, never the user's buffer,
// so the user may reuse its buffer once it is told "done" and a replay still resends the right
// bytes. Order and exactly-once stay the engine's (the copy changes where bytes come from, not
// which WRs go out).
//
// A slot's life: Free -> Posted (stage(): the copy is made, the WR goes out from it) -> Reported
// (sent_locally(): the provider completed the send; the user is told done) -> Free (completed():
// the engine completed the request, i.e. the receiver acknowledged it, or the connection failed).
// The engine may complete a request before the provider's local completion was read (the ack and
// the completion in one CQ read): Posted -> Free, and the user hears it then, once.
//
// Pure bookkeeping, no libfabric: tests/backends/hw/libfabric/staged_sends_test.cpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/core/ids.hpp"

namespace railcheck::fabric {

class StagedSends {
 public:
  // `slots` copies of at most `slot_bytes` each (slots == 0 or slot_bytes == 0: nothing is
  // staged). The memory is allocated on the first stage() (most connections of a job carry
  // only large messages, or none).
  StagedSends(std::size_t slots, std::size_t slot_bytes);

  // The arena's first byte and size, for registering it; null before the first stage().
  const std::byte* arena() const { return arena_.get(); }
  std::size_t arena_bytes() const { return slots_.size() * slot_bytes_; }
  bool fits(std::size_t size) const { return size <= slot_bytes_ && !slots_.empty() && slot_bytes_ > 0; }

  // Copies `size` bytes of `data` into a free slot for `request`; the copy's address, or
  // nullopt when the message does not fit or every slot is taken (the caller sends from the
  // user's buffer and completes on the ack, as without staging).
  std::optional<const std::byte*> stage(RequestId request, const void* data, std::size_t size);

  // The provider completed a send from `addr` locally (its bytes left). The request to report
  // done now, once: only for the first local completion of a slot still Posted (a replay's
  // completion, or one after the engine completed the request, reports nothing).
  std::optional<RequestId> sent_locally(std::uint64_t addr);

  enum class Outcome : std::uint8_t {
    NotStaged,        // not a staged request: report the engine's result as usual
    ReportNow,        // staged, not yet reported: report the engine's result now
    AlreadyReported,  // the user heard "done" at the local completion: nothing more to report
  };
  // The engine completed `request` (acknowledged, or failed): its slot is free again.
  Outcome completed(RequestId request);

  // Staged sends whose delivery is not yet acknowledged (slots not Free).
  std::size_t in_use() const { return in_use_; }

 private:
  enum class SlotState : std::uint8_t { Free, Posted, Reported };
  struct Slot {
    SlotState state = SlotState::Free;
    RequestId request{};
  };
  std::optional<std::size_t> slot_at(std::uint64_t addr) const;

  std::size_t slot_bytes_;
  std::vector<Slot> slots_;
  std::unique_ptr<std::byte[]> arena_;
  std::size_t in_use_ = 0;
};

}  // namespace railcheck::fabric
