#pragma once
// Everything the engine consumes. A driver turns CQ entries, expired timers, arrived control
// messages and user calls into these and hands them over together with "now".
#include <cstdint>
#include <optional>
#include <variant>

#include "engine/core/control_message.hpp"
#include "engine/core/ids.hpp"
#include "engine/core/work_request.hpp"

namespace railcheck {

// One ibv_wc (or fi_cq_data_entry) for a WR this engine posted.
struct CompletionEvent {
  PathIndex path{};
  WrId wr{};
  WrOpcode opcode = WrOpcode::Send;
  WcStatus status = WcStatus::Success;
  std::uint32_t byte_len = 0;
  std::optional<std::uint32_t> imm;
};

// The peer's NIC answered the ProbeRail with this nonce.
struct ProbeAnswered {
  PathIndex path{};
  std::uint64_t nonce = 0;
};

struct TimerFired {
  TimerId timer{};
};

struct ControlReceived {
  ControlChannel channel{};
  ControlMessage message;
};

// User calls (the NCCL net API surface that carries data).
struct UserRegMr {
  MrId mr{};
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
};
struct UserIsend {
  RequestId request{};
  Sge data{};
  std::uint64_t tag = 0;
};
// A grouped receive: buffers[i] receives the message tagged tags[i] (seed §16.3). One buffer
// is held inline, as in a WorkRequest: NCCL's p2p receives one at a time, and two heap blocks
// per irecv were a small message's allocations (issue 32).
struct UserIrecv {
  RequestId request{};
  InlineOne<Sge> buffers;
  InlineOne<std::uint64_t> tags;
};

using Event =
    std::variant<CompletionEvent, TimerFired, ControlReceived, UserRegMr, UserIsend, UserIrecv, ProbeAnswered>;

}  // namespace railcheck
