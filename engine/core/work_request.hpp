#pragma once
// Work requests and completions, in the vocabulary of ibv_post_send / ibv_post_recv / ibv_wc.
// A WorkRequest is a value: the in-flight table keeps deep copies so a WR can be replayed on
// another QP after the one it was posted to has been destroyed.
#include <cstdint>
#include <optional>
#include <string_view>
#include <boost/container/small_vector.hpp>

#include "engine/core/ids.hpp"

namespace railcheck {

enum class WrOpcode : std::uint8_t { Send, Recv, Write, WriteImm };

// One scatter/gather element. `mr` names the user's registration; the backend resolves it to
// the lkey of whichever protection domain the WR is posted on (lazy registration, seed §3.3).
struct Sge {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  MrId mr{};
  bool operator==(const Sge&) const = default;
};

// The engine posts one buffer (and, on a receive, one tag) per WR; a backend may post more.
// The first is held inline: a WR is copied into the in-flight table, the QP, the wire and, in
// the model checker, into every successor state, and two heap blocks per copy were a large part
// of a checker step (docs/benchmarks.md, model checker).
template <typename T>
using InlineOne = boost::container::small_vector<T, 1>;

struct WorkRequest {
  WrId id{};
  WrOpcode opcode = WrOpcode::Send;
  InlineOne<Sge> sges;
  // Grouped receive (seed §16.3): tags[i] belongs to sges[i]; order is part of the contract.
  InlineOne<std::uint64_t> tags;
  // Immediate data. The failover engine carries the message sequence number here.
  std::optional<std::uint32_t> imm;
  bool operator==(const WorkRequest&) const = default;

  std::uint64_t total_bytes() const {
    std::uint64_t n = 0;
    for (const auto& s : sges) n += s.length;
    return n;
  }
};

// Completion status, named after enum ibv_wc_status.
enum class WcStatus : std::uint8_t {
  Success,
  LocLenErr,
  LocQpOpErr,
  LocProtErr,
  WrFlushErr,
  RemAccessErr,
  RemOpErr,
  RetryExcErr,
  RnrRetryExcErr,
  GeneralErr,
};

std::string_view to_string(WcStatus s);
std::string_view to_string(WrOpcode op);

// A completion that says the path itself is broken (as opposed to a flush we caused, or a
// programming error on our side). These trigger failover; NCCL's own resiliency code reacts to
// RETRY_EXC_ERR (and WR_FLUSH_ERR) the same way.
constexpr bool is_path_failure(WcStatus s) {
  return s == WcStatus::RetryExcErr || s == WcStatus::RnrRetryExcErr || s == WcStatus::GeneralErr;
}

// QP states, as in enum ibv_qp_state.
enum class QpState : std::uint8_t { Reset, Init, Rtr, Rts, Sqd, Sqe, Err };
std::string_view to_string(QpState s);

}  // namespace railcheck
